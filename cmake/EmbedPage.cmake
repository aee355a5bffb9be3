# zgc_embed_page(OUTPUT PREFIX): a rule that generates OUTPUT, a C file with
# the viewer page's files as arrays PREFIX_html, PREFIX_css and PREFIX_js
# (cmake/EmbedFiles.cmake).  The viewer (zgc view) and the runtime's live
# view each generate their own copy from the same files in viewer/page/, so
# that neither depends on the other.
set(ZGC_PAGE_DIR ${CMAKE_CURRENT_LIST_DIR}/../viewer/page)
function(zgc_embed_page output prefix)
  set(inputs ${ZGC_PAGE_DIR}/index.html ${ZGC_PAGE_DIR}/viewer.css ${ZGC_PAGE_DIR}/viewer.js)
  add_custom_command(OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} -DPREFIX=${prefix} -DNAMES=html|css|js
            -DINPUTS=${ZGC_PAGE_DIR}/index.html|${ZGC_PAGE_DIR}/viewer.css|${ZGC_PAGE_DIR}/viewer.js
            -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/EmbedFiles.cmake
    DEPENDS ${inputs} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/EmbedFiles.cmake
    COMMENT "Embedding the viewer page (${prefix})"
    VERBATIM)
endfunction()
