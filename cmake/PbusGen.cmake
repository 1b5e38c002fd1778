# pbus_generate(NAME FDEPL PREFIX): run pbus-gen on a deployment file at
# build time, producing NAME.pbs (the compiled schema pbusd loads) and
# NAME.h / NAME.c (typed C accessors) in the current binary dir, and a
# library target NAME-bindings to link against. The generator runs from the
# project's venv (PBUS_PYTHON, made by `make venv`); the outputs are rebuilt
# when the .fidl/.fdepl or the generator change. The generator is this
# checkout's gen/ (PYTHONPATH), whatever copy the venv has installed, as
# for every pbus-gen run of the build: a second worktree sharing the venv
# builds with its own generator.
# What a run of pbus-gen on FDEPL depends on: the .fidl/.fdepl files beside
# it and the generator itself (into the variable named by OUT_VAR).
function(_pbus_gen_depends fdepl out_var)
  if(NOT PBUS_PYTHON)
    message(FATAL_ERROR "pbus-gen: PBUS_PYTHON is not set (build through the root Makefile, which makes the venv)")
  endif()
  get_filename_component(dir ${fdepl} DIRECTORY)
  file(GLOB sources ${dir}/*.fidl ${dir}/*.fdepl)
  file(GLOB_RECURSE generator ${PROJECT_SOURCE_DIR}/gen/pbusgen/*.py ${PROJECT_SOURCE_DIR}/gen/pbusgen/templates/*
       ${PROJECT_SOURCE_DIR}/gen/pbusgen/grammar/*)
  set(${out_var} ${sources} ${generator} PARENT_SCOPE)
endfunction()

function(pbus_generate name fdepl prefix)
  _pbus_gen_depends(${fdepl} depends)
  set(out ${CMAKE_CURRENT_BINARY_DIR})
  add_custom_command(
    OUTPUT ${out}/${name}.pbs ${out}/${name}.h ${out}/${name}.c
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PROJECT_SOURCE_DIR}/gen
            ${PBUS_PYTHON} -m pbusgen --prefix ${prefix}
            --schema ${out}/${name}.pbs --c-header ${out}/${name}.h --c-source ${out}/${name}.c ${fdepl}
    DEPENDS ${depends}
    COMMENT "pbus-gen ${fdepl}"
    VERBATIM)
  add_library(${name}-bindings STATIC ${out}/${name}.c)
  target_include_directories(${name}-bindings PUBLIC ${out})
  target_link_libraries(${name}-bindings PUBLIC parambus)
  add_custom_target(${name}-schema ALL DEPENDS ${out}/${name}.pbs)
endfunction()

# pbus_generate_schema(NAME FDEPL): only the compiled schema NAME.pbs, for a
# deployment whose C bindings another pbus_generate() already provides (the
# hardware-bound variant of an instrument, for instance).
function(pbus_generate_schema name fdepl)
  _pbus_gen_depends(${fdepl} depends)
  set(out ${CMAKE_CURRENT_BINARY_DIR})
  add_custom_command(
    OUTPUT ${out}/${name}.pbs
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PROJECT_SOURCE_DIR}/gen
            ${PBUS_PYTHON} -m pbusgen --schema ${out}/${name}.pbs ${fdepl}
    DEPENDS ${depends}
    COMMENT "pbus-gen ${fdepl}"
    VERBATIM)
  add_custom_target(${name}-schema ALL DEPENDS ${out}/${name}.pbs)
endfunction()

# pbus_generate_rpc(NAME INPUT PREFIX [INTERFACE FQN]): the methods and
# broadcasts of a Franca interface (INPUT: its .fidl, or a .fdepl that
# deploys it, for CallableBy), compiled at build time by pbus-gen
# --rpc-header/--rpc-source into NAME-rpc.h / NAME-rpc.c in the current
# binary dir (docs/generator.md, "Methods and broadcasts"), and a library
# target NAME-rpc holding the client (PREFIX_client_<Iface>_*), the server
# (PREFIX_server_<Iface>_*) and the codec of the argument types. Linking
# NAME-rpc brings its header's folder and libparambus with it. INTERFACE
# picks the interface when INPUT holds several. The registry (a pbusd) needs
# a schema; for an interface without attributes, pbus_generate_schema() of
# the same INPUT gives one with no parameters.
function(pbus_generate_rpc name input prefix)
  cmake_parse_arguments(PARSE_ARGV 3 G "" "INTERFACE" "")
  if(G_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pbus_generate_rpc(${ARGV}): unexpected ${G_UNPARSED_ARGUMENTS}")
  endif()
  _pbus_gen_depends(${input} depends)
  set(out ${CMAKE_CURRENT_BINARY_DIR})
  set(select)
  if(G_INTERFACE)
    set(select --interface ${G_INTERFACE})
  endif()
  add_custom_command(
    OUTPUT ${out}/${name}-rpc.h ${out}/${name}-rpc.c
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PROJECT_SOURCE_DIR}/gen
            ${PBUS_PYTHON} -m pbusgen --prefix ${prefix} ${select}
            --rpc-header ${out}/${name}-rpc.h --rpc-source ${out}/${name}-rpc.c ${input}
    DEPENDS ${depends}
    COMMENT "pbus-gen --rpc ${input}"
    VERBATIM)
  add_library(${name}-rpc STATIC ${out}/${name}-rpc.c)
  target_include_directories(${name}-rpc PUBLIC ${out})
  target_link_libraries(${name}-rpc PUBLIC parambus)
endfunction()

# pbus_generate_java(NAME INPUT DIR [PACKAGE NAME]): the typed Java class of
# a Franca interface (INPUT: its .fdepl, or a .fidl alone), written at build
# time by pbus-gen --java under DIR, as DIR/<package folders>/<Interface>.java
# (docs/generator.md, "The Java class"; PACKAGE is --java-package). Target
# NAME-java, part of ALL. The class's file name comes from the interface,
# which CMake does not read, so the target runs pbus-gen at every build (a
# third of a second) rather than trusting a stamp: a class deleted by hand
# comes back. pbus-gen rewrites the class only when its text changes, so
# javac and Maven see no change otherwise. The generator is this checkout's
# gen/ (PYTHONPATH), whatever copy the venv has installed.
function(pbus_generate_java name input dir)
  cmake_parse_arguments(PARSE_ARGV 3 G "" "PACKAGE" "")
  if(G_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pbus_generate_java(${ARGV}): unexpected ${G_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT PBUS_PYTHON)
    message(FATAL_ERROR "pbus-gen: PBUS_PYTHON is not set (build through the root Makefile, which makes the venv)")
  endif()
  set(package)
  if(G_PACKAGE)
    set(package --java-package ${G_PACKAGE})
  endif()
  add_custom_target(${name}-java ALL
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PROJECT_SOURCE_DIR}/gen
            ${PBUS_PYTHON} -m pbusgen --java ${dir} ${package} ${input}
    COMMENT "pbus-gen --java ${input}"
    VERBATIM)
endfunction()
