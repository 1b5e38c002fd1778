# install-units.cmake: run by `cmake --install` (install(CODE) in the top
# CMakeLists.txt), so that the systemd units name the prefix they are
# installed under (`make install PREFIX=DIR` is `cmake --install --prefix
# DIR`, which does not configure again): each dist/systemd/UNIT.in becomes
# $DESTDIR/PREFIX/lib/systemd/system/UNIT with @CMAKE_INSTALL_FULL_BINDIR@,
# @CMAKE_INSTALL_FULL_SYSCONFDIR@ and @CMAKE_INSTALL_FULL_DATADIR@ of that
# prefix, made absolute as GNUInstallDirs does (/usr -> /etc, /opt/X ->
# /etc/opt/X for the configuration).
# In: PBUS_UNITS (the list), PBUS_UNITS_SOURCE (dist/systemd), and the
# relative PBUS_BINDIR, PBUS_SYSCONFDIR, PBUS_DATADIR.
function(pbus_full_dir relative out)
  if(IS_ABSOLUTE "${relative}")
    set(${out} "${relative}" PARENT_SCOPE)
  elseif(relative STREQUAL "etc" AND (CMAKE_INSTALL_PREFIX STREQUAL "/usr" OR CMAKE_INSTALL_PREFIX STREQUAL "/"))
    set(${out} "/etc" PARENT_SCOPE)
  elseif(relative STREQUAL "etc" AND CMAKE_INSTALL_PREFIX MATCHES "^/opt/")
    set(${out} "/etc${CMAKE_INSTALL_PREFIX}" PARENT_SCOPE)
  elseif(CMAKE_INSTALL_PREFIX STREQUAL "/")
    set(${out} "/${relative}" PARENT_SCOPE)
  else()
    set(${out} "${CMAKE_INSTALL_PREFIX}/${relative}" PARENT_SCOPE)
  endif()
endfunction()

pbus_full_dir("${PBUS_BINDIR}" CMAKE_INSTALL_FULL_BINDIR)
pbus_full_dir("${PBUS_SYSCONFDIR}" CMAKE_INSTALL_FULL_SYSCONFDIR)
pbus_full_dir("${PBUS_DATADIR}" CMAKE_INSTALL_FULL_DATADIR)
set(_dir "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
foreach(unit IN LISTS PBUS_UNITS)
  message(STATUS "Installing: ${_dir}/${unit}")
  configure_file("${PBUS_UNITS_SOURCE}/${unit}.in" "${_dir}/${unit}" @ONLY)
endforeach()
