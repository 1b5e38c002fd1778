# pbus_generate(): pbus-gen as a build step, for projects built against an
# installed parambus (find_package(parambus) includes this file; the
# project's own build uses cmake/PbusGen.cmake, which runs the checkout's
# generator). docs/install.md and docs/generator.md describe it.
#
#   pbus_generate(TARGET target
#                 FDEPL file.fdepl | FIDL file.fidl
#                 [FIDL file.fidl ...]      the .fidl files the input imports
#                 [PREFIX name]             C prefix (pbus-gen --prefix)
#                 [NAME base]               output base name (default: the input's)
#                 [INTERFACE fqn]           when the input holds several
#                 [INCLUDE_DIRS dir ...]    pbus-gen -I
#                 [OUTPUT_DIR dir]          default: <current binary dir>/<target>
#                 [RPC]                     methods and broadcasts too
#                 [NO_BINDINGS])            the schema alone, no C
#
# writes, at build time, into OUTPUT_DIR: base.pbs (the compiled schema
# pbusd loads), base.h/base.c (typed table bindings), with RPC
# base-rpc.h/base-rpc.c (client proxies and server stubs), and makes
# the static library TARGET of the C files, with OUTPUT_DIR as its public
# include folder and parambus::parambus linked. The schema is built with
# ALL (target TARGET-schema) even without a program that links TARGET. Its
# path is the target property PBUS_SCHEMA and the variable TARGET_SCHEMA.
# Outputs are rebuilt when an input or pbus-gen changes.
#
# The pbus-gen that runs is the installed one beside this package
# (PARAMBUS_PBUS_GEN, set by parambusConfig.cmake), never one from PATH.

function(pbus_generate)
  cmake_parse_arguments(PARSE_ARGV 0 G "RPC;NO_BINDINGS"
    "TARGET;FDEPL;PREFIX;NAME;INTERFACE;OUTPUT_DIR" "FIDL;INCLUDE_DIRS")
  if(G_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pbus_generate(): unexpected arguments: ${G_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT G_TARGET)
    message(FATAL_ERROR "pbus_generate(): TARGET is required")
  endif()
  if(NOT PARAMBUS_PBUS_GEN OR NOT EXISTS "${PARAMBUS_PBUS_GEN}")
    message(FATAL_ERROR "pbus_generate(): pbus-gen not found at '${PARAMBUS_PBUS_GEN}' (is parambus installed completely?)")
  endif()
  # The input: the deployment, else the one .fidl.
  if(G_FDEPL)
    set(input ${G_FDEPL})
  else()
    list(LENGTH G_FIDL n)
    if(NOT n EQUAL 1)
      message(FATAL_ERROR "pbus_generate(${G_TARGET}): give FDEPL, or exactly one FIDL")
    endif()
    set(input ${G_FIDL})
  endif()
  get_filename_component(input ${input} ABSOLUTE)
  if(NOT EXISTS ${input})
    message(FATAL_ERROR "pbus_generate(${G_TARGET}): ${input} does not exist")
  endif()
  set(depends ${input} ${PARAMBUS_PBUS_GEN})
  foreach(f ${G_FIDL})
    get_filename_component(f ${f} ABSOLUTE)
    list(APPEND depends ${f})
  endforeach()
  if(G_NAME)
    set(base ${G_NAME})
  else()
    get_filename_component(base ${input} NAME_WE)
  endif()
  if(G_OUTPUT_DIR)
    get_filename_component(out ${G_OUTPUT_DIR} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
  else()
    set(out ${CMAKE_CURRENT_BINARY_DIR}/${G_TARGET})
  endif()
  set(options)
  if(G_PREFIX)
    list(APPEND options --prefix ${G_PREFIX})
  endif()
  if(G_INTERFACE)
    list(APPEND options --interface ${G_INTERFACE})
  endif()
  foreach(d ${G_INCLUDE_DIRS})
    get_filename_component(d ${d} ABSOLUTE)
    list(APPEND options -I ${d})
  endforeach()

  set(outputs ${out}/${base}.pbs)
  set(args --schema ${out}/${base}.pbs)
  set(sources)
  if(NOT G_NO_BINDINGS)
    list(APPEND outputs ${out}/${base}.h ${out}/${base}.c)
    list(APPEND args --c-header ${out}/${base}.h --c-source ${out}/${base}.c)
    list(APPEND sources ${out}/${base}.c)
  endif()
  if(G_RPC)
    list(APPEND outputs ${out}/${base}-rpc.h ${out}/${base}-rpc.c)
    list(APPEND args --rpc-header ${out}/${base}-rpc.h --rpc-source ${out}/${base}-rpc.c)
    list(APPEND sources ${out}/${base}-rpc.c)
  endif()
  file(MAKE_DIRECTORY ${out})
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${PARAMBUS_PBUS_GEN} ${options} ${args} ${input}
    DEPENDS ${depends}
    COMMENT "pbus-gen ${input}"
    VERBATIM)
  add_custom_target(${G_TARGET}-schema ALL DEPENDS ${out}/${base}.pbs)
  if(sources)
    add_library(${G_TARGET} STATIC ${sources})
    target_include_directories(${G_TARGET} PUBLIC ${out})
    target_link_libraries(${G_TARGET} PUBLIC parambus::parambus)
  else()
    add_library(${G_TARGET} INTERFACE)
    add_dependencies(${G_TARGET} ${G_TARGET}-schema)
  endif()
  set_target_properties(${G_TARGET} PROPERTIES PBUS_SCHEMA ${out}/${base}.pbs)
  set(${G_TARGET}_SCHEMA ${out}/${base}.pbs PARENT_SCOPE)
endfunction()
