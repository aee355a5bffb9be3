/* paths.h — where zgc's parts are (prefix zpa_): in a build tree, or in an
 * installation found relative to the zgc executable.
 *
 * A build tree has zgc-backend.so beside zgc; the paths compiled in (the
 * runtime library and headers, the standard library, absolute paths into
 * the build and source trees) hold.  An installation (`cmake --install`,
 * the .deb) is
 *
 *   PREFIX/bin/zgc
 *   PREFIX/LIBDIR/zgc/zgc-backend.so     the backend module
 *   PREFIX/LIBDIR/zgc/zgc-runs.so        the runs module (runsmod.h)
 *   PREFIX/LIBDIR/libzgrt.a              the runtime executables link
 *   PREFIX/INCLUDEDIR/zgrt/zgrt.h        for the C files of actions
 *   PREFIX/DATADIR/zgc/stdlib/           the standard library
 *
 * (LIBDIR, INCLUDEDIR, DATADIR: GNUInstallDirs' lib, include and share,
 * relative to the prefix; cmake/Install.cmake)
 * and nothing in it names the build tree, so a moved or unpacked
 * installation works.  The variables ZGC_BACKEND, ZGC_RUNS_MODULE,
 * ZGC_RUNTIME_LIB, ZGC_RUNTIME_INCLUDE and ZGC_STDLIB, when set, win in
 * either case: zpa_init sets the first four for an installation (the
 * backend module reads them) unless they are set already. */
#ifndef ZGC_DRIVER_PATHS_H
#define ZGC_DRIVER_PATHS_H

/* Finds the installation, once, before any command runs. */
void zpa_init(void);

/* "build tree" or "installation PREFIX" (for zgc --version). */
const char *zpa_where(void);

#endif
