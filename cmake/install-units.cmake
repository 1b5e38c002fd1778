# install-units.cmake: run by `cmake --install` (install(CODE) in the top
# CMakeLists.txt), so that the systemd units name the prefix they are
# installed under (`make install PREFIX=DIR` is `cmake --install --prefix
# DIR`, which does not configure again): each dist/systemd/UNIT.in becomes
# $DESTDIR/PREFIX/lib/systemd/system/UNIT with @CMAKE_INSTALL_FULL_BINDIR@,
# @CMAKE_INSTALL_FULL_SYSCONFDIR@ and @CMAKE_INSTALL_FULL_DATADIR@ of that
# prefix, made absolute by GNUInstallDirs itself (/usr -> /etc, /opt/X ->
# /etc/opt/X for the configuration).
# In: PBUS_UNITS (the list), PBUS_UNITS_SOURCE (dist/systemd), and the
# configured relative CMAKE_INSTALL_BINDIR, _SYSCONFDIR, _DATADIR and
# _LIBDIR (given, so that GNUInstallDirs, with no language in script mode,
# need not guess the library folder).
include(GNUInstallDirs)
foreach(dir BINDIR SYSCONFDIR DATADIR)
  GNUInstallDirs_get_absolute_install_dir(CMAKE_INSTALL_FULL_${dir} CMAKE_INSTALL_${dir} ${dir})
endforeach()
set(_dir "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
foreach(unit IN LISTS PBUS_UNITS)
  message(STATUS "Installing: ${_dir}/${unit}")
  configure_file("${PBUS_UNITS_SOURCE}/${unit}.in" "${_dir}/${unit}" @ONLY)
endforeach()
