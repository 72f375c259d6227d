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
	.incbin "src/html/report.js"
	.byte 0
	.section .note.GNU-stack,"",@progbits
