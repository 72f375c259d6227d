/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The page's style and script (src/html/), built into the binary so that
 * report --html needs no file beside it and the page none beside itself.
 */
	.section .rodata
	.global kmt_html_css
	.type kmt_html_css, @object
kmt_html_css:
	.incbin "src/html/report.css"
	.byte 0
	.global kmt_html_js
	.type kmt_html_js, @object
kmt_html_js:
	/* One script in parts, in this order (each section of page-1-base.js's list). */
	.incbin "src/html/page-1-base.js"
	.incbin "src/html/page-2-colours.js"
	.incbin "src/html/page-3-charts.js"
	.incbin "src/html/page-4-tables.js"
	.incbin "src/html/page-5-flame.js"
	.incbin "src/html/page-6-sections.js"
	.incbin "src/html/page-7-checks.js"
	.incbin "src/html/page-8-diff.js"
	.incbin "src/html/page-9-main.js"
	.byte 0
	.section .note.GNU-stack,"",@progbits
