# The floors (core -> runtime -> train -> commands -> main) may only include downwards. Run as
#   cmake -DSOURCE_DIR=<repo> -P check_floors.cmake
# Fails naming the file, the include and the rule it breaks. The include paths of the CMake targets
# already keep most mistakes out; this also catches headers that are on every path (CLI11 in
# /usr/include) and quoted includes that resolve relative to the file.
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_floors.cmake: pass -DSOURCE_DIR=<repository root>")
endif()

set(violations "")

# check_floor(NAME DIR SEARCH <dirs...> ALLOWED <dirs...> FORBIDDEN_ANGLE <prefixes...>)
# A quoted include is looked up next to the file, then in SEARCH (the target's include path), and
# must land inside DIR or one of ALLOWED (the floors below); an angle include must not start with
# one of FORBIDDEN_ANGLE.
function(check_floor name dir)
  cmake_parse_arguments(arg "" "" "SEARCH;ALLOWED;FORBIDDEN_ANGLE" ${ARGN})
  file(GLOB_RECURSE files ${SOURCE_DIR}/${dir}/*.cpp ${SOURCE_DIR}/${dir}/*.hpp ${SOURCE_DIR}/${dir}/*.h
       ${SOURCE_DIR}/${dir}/*.cu ${SOURCE_DIR}/${dir}/*.cuh)
  set(found "")
  foreach(file ${files})
    file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include")
    get_filename_component(file_dir ${file} DIRECTORY)
    file(RELATIVE_PATH shown ${SOURCE_DIR} ${file})
    foreach(line ${lines})
      if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
        set(header ${CMAKE_MATCH_1})
        set(resolved "")
        foreach(root ${file_dir} ${arg_SEARCH})
          if(NOT resolved AND EXISTS ${root}/${header})
            get_filename_component(resolved ${root}/${header} ABSOLUTE)
          endif()
        endforeach()
        set(inside FALSE)
        foreach(allowed ${SOURCE_DIR}/${dir} ${arg_ALLOWED})
          string(FIND "${resolved}" "${allowed}/" at)
          if(resolved AND at EQUAL 0)
            set(inside TRUE)
          endif()
        endforeach()
        if(NOT inside)
          list(APPEND found "${shown}: #include \"${header}\" is not in the ${name} floor or below it")
        endif()
      elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
        set(header ${CMAKE_MATCH_1})
        foreach(prefix ${arg_FORBIDDEN_ANGLE})
          string(FIND "${header}" "${prefix}" at)
          if(at EQUAL 0)
            list(APPEND found "${shown}: #include <${header}> is not allowed in the ${name} floor")
          endif()
        endforeach()
      endif()
    endforeach()
  endforeach()
  set(violations ${violations} ${found} PARENT_SCOPE)
endfunction()

set(core_include ${SOURCE_DIR}/core/include)
set(runtime ${SOURCE_DIR}/launcher/runtime)

check_floor(core core SEARCH ${core_include} ${SOURCE_DIR}/core/src ALLOWED ""
            FORBIDDEN_ANGLE "CLI/" "slurm/" "nlohmann/" "nccl" "cuda")
check_floor(runtime launcher/runtime SEARCH ${runtime} ${core_include} ALLOWED ${core_include}
            FORBIDDEN_ANGLE "CLI/" "slurm/")
check_floor(train launcher/train SEARCH ${SOURCE_DIR}/launcher ${runtime} ${core_include} ALLOWED ${runtime} ${core_include}
            FORBIDDEN_ANGLE "CLI/" "slurm/")

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "floors check: a lower floor includes a higher one (core -> runtime -> train -> commands -> main):\n  ${text}\n"
                      "Move the shared code down a floor, or pass what is needed in as a plain struct.")
endif()
message(STATUS "floors check: core, runtime and train include only their own floor and the ones below")
