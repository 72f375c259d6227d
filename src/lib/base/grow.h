/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Growing arrays, the one way: git's ALLOC_GROW (room for one more, by
 * doubling) and a vector of structs built on it. Macros only, for the
 * library and the program alike; nothing here is part of the public API.
 */
#ifndef KMT_GROW_H
#define KMT_GROW_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Room for @nr elements in the array @x of @alloc (git's ALLOC_GROW): its
 * size doubled, @first the first time, or @nr if that is more. 0, or
 * -ENOMEM with @x and @alloc as they were. @x and @alloc are lvalues,
 * evaluated more than once.
 */
#define ALLOC_GROW(x, nr, alloc, first) ({					\
	size_t ag_nr_ = (nr);							\
	int ag_ret_ = 0;							\
	if (ag_nr_ > (size_t)(alloc)) {						\
		size_t ag_na_ = (alloc) ? (size_t)(alloc) * 2 : (size_t)(first);	\
		void *ag_nx_ = NULL;						\
		if (ag_na_ < ag_nr_)						\
			ag_na_ = ag_nr_;					\
		if (ag_na_ <= SIZE_MAX / sizeof(*(x)))				\
			ag_nx_ = realloc((x), ag_na_ * sizeof(*(x)));		\
		if (ag_nx_) {							\
			(x) = ag_nx_;						\
			(alloc) = ag_na_;					\
		} else {							\
			ag_ret_ = -ENOMEM;					\
		}								\
	}									\
	ag_ret_; })

/*
 * A growable array of structs: zero-initialise, free(.v). VEC_PUSH adds a
 * zeroed element and gives its index, or UINT32_MAX (the model's NONE)
 * with @oom set.
 */
#define VEC(type) struct { type *v; size_t n, alloc; }
#define VEC_PUSH(vec, oom) ({							\
	uint32_t vp_i_ = UINT32_MAX;						\
	if (ALLOC_GROW((vec).v, (vec).n + 1, (vec).alloc, 64)) {		\
		(oom) = true;							\
	} else {								\
		memset(&(vec).v[(vec).n], 0, sizeof(*(vec).v));			\
		vp_i_ = (uint32_t)(vec).n++;					\
	}									\
	vp_i_; })

#endif
