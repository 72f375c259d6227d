/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Sanitizer defaults linked into every fuzz target, so that running a
 * target on a single input (a reproducer in fuzz/crashes/) behaves as in a
 * fuzzing run: undefined behaviour stops the program with a stack trace,
 * even for the checks fuzz/Makefile makes recoverable (FUZZ_RECOVER) so
 * that fuzz/ubsan.supp can silence known library bugs during runs.
 */
const char *__ubsan_default_options(void);

const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}
