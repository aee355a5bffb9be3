# Installation (cmake --install) and the Debian package (cpack -G DEB).
# The layout is the one driver/paths.h describes: zgc finds its parts
# relative to its own location, so nothing installed names the build tree
# and an unpacked or moved installation works.
include(GNUInstallDirs)
foreach(dir LIBDIR INCLUDEDIR DATADIR MANDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    message(FATAL_ERROR "CMAKE_INSTALL_${dir} must be relative to the prefix (zgc finds its parts from its own location)")
  endif()
endforeach()
target_compile_definitions(zgc PRIVATE
  ZGC_INSTALL_LIBDIR="${CMAKE_INSTALL_LIBDIR}"
  ZGC_INSTALL_INCLUDEDIR="${CMAKE_INSTALL_INCLUDEDIR}"
  ZGC_INSTALL_DATADIR="${CMAKE_INSTALL_DATADIR}")

install(TARGETS zgc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS zgc_backend_module LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/zgc)
install(TARGETS zgc_runs_module LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/zgc)
install(TARGETS zgplanner LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/zgc)
install(TARGETS zgrt ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES runtime/zgrt.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/zgrt)
install(DIRECTORY stdlib/ DESTINATION ${CMAKE_INSTALL_DATADIR}/zgc/stdlib)
install(FILES README.md LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} OPTIONAL)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# pkg-config for C programs that use the runtime's header and library
# (the C files of actions, built by hand)
file(RELATIVE_PATH ZGC_PC_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(cmake/zgrt.pc.in ${CMAKE_BINARY_DIR}/generated/zgrt.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/generated/zgrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# bash completion: commands and options from zgc's own help
install(FILES scripts/zgc.bash-completion DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
  RENAME zgc)

# Manual pages from docs/zgc.md (scripts/man.sh, with pandoc): zgc(1) and
# zgc-COMMAND(1) for each command.
find_program(ZGC_PANDOC pandoc)
if(ZGC_PANDOC)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/man/zgc.1
    COMMAND ${CMAKE_SOURCE_DIR}/scripts/man.sh $<TARGET_FILE:zgc> ${CMAKE_SOURCE_DIR}/docs/zgc.md
            ${CMAKE_BINARY_DIR}/man ${PROJECT_VERSION}
    DEPENDS zgc ${CMAKE_SOURCE_DIR}/docs/zgc.md ${CMAKE_SOURCE_DIR}/scripts/man.sh
            ${CMAKE_SOURCE_DIR}/scripts/man-tables.lua
    COMMENT "manual pages")
  add_custom_target(zgc_man ALL DEPENDS ${CMAKE_BINARY_DIR}/man/zgc.1)
  install(DIRECTORY ${CMAKE_BINARY_DIR}/man/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
    FILES_MATCHING PATTERN "*.1")
else()
  message(WARNING "pandoc not found: no manual pages (scripts/install-deps.sh installs it)")
endif()

# The Debian package: the installation above under /usr.  Depends: the
# shared libraries zgc links (found by dpkg-shlibdeps), and what `zgc
# build` needs to link a workflow (a C compiler and the development files
# of the libraries the runtime uses); libcurl is loaded by the model
# backends when a workflow calls a model server.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME zgc)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "compiler and runtime for ZipperGen multi-agent workflows")
set(CPACK_PACKAGE_DESCRIPTION "zgc compiles ZipperGen workflows (.zg): global multi-agent LLM programs projected into one native program per participant, which cannot deadlock.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "zgc developers <zgc@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# zgc trace check loads ICU with dlopen, which dpkg-shlibdeps cannot see
string(REGEX MATCH "^[0-9]+" zgc_icu_major "${ICU_UC_VERSION}")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "gcc | c-compiler, libc6-dev, libjansson-dev, libssl-dev, libsqlite3-dev, libnats-dev, libicu${zgc_icu_major}")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libcurl4")
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/package)
include(CPack)
