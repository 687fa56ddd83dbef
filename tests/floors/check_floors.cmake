# The floors (core -> runtime -> train -> reporting -> commands -> main) may only include downwards,
# and one command never includes another's files. Run as
#   cmake -DSOURCE_DIR=<repo> -P check_floors.cmake
# Fails naming the file, the include and the rule it breaks. The include paths of the CMake targets
# already keep most mistakes out; this also catches headers that are on every path (CLI11 in
# /usr/include), quoted includes that resolve relative to the file, and names two folders share.
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_floors.cmake: pass -DSOURCE_DIR=<repository root>")
endif()

set(violations "")

# check_floor(NAME DIR [SIBLINGS] SEARCH <dirs...> ALLOWED <dirs...> FORBIDDEN_ANGLE <prefixes...>)
# A quoted include is written from the floor's include path (SEARCH, the target's include
# directories), never relative to the including file, and names exactly one file there; that file
# must lie inside DIR or one of ALLOWED (the floors below). An angle include must not start with
# one of FORBIDDEN_ANGLE. SIBLINGS: DIR holds one folder per command, and a file in DIR/<X>/ (or at
# DIR's top, the code the commands share) must not include a file of another folder DIR/<Y>/.
function(check_floor name dir)
  cmake_parse_arguments(arg "SIBLINGS" "" "SEARCH;ALLOWED;FORBIDDEN_ANGLE" ${ARGN})
  file(GLOB_RECURSE files ${SOURCE_DIR}/${dir}/*.cpp ${SOURCE_DIR}/${dir}/*.hpp ${SOURCE_DIR}/${dir}/*.h
       ${SOURCE_DIR}/${dir}/*.cu ${SOURCE_DIR}/${dir}/*.cuh)
  set(found "")
  foreach(file ${files})
    file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include")
    get_filename_component(file_dir ${file} DIRECTORY)
    file(RELATIVE_PATH shown ${SOURCE_DIR} ${file})
    file(RELATIVE_PATH in_floor ${SOURCE_DIR}/${dir} ${file})
    string(REGEX MATCH "^[^/]+/" own_folder "${in_floor}")
    foreach(line ${lines})
      if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
        set(header ${CMAKE_MATCH_1})
        set(hits "")
        foreach(root ${arg_SEARCH})
          if(EXISTS ${root}/${header})
            get_filename_component(hit ${root}/${header} ABSOLUTE)
            list(APPEND hits ${hit})
          endif()
        endforeach()
        list(REMOVE_DUPLICATES hits)
        list(LENGTH hits hit_count)
        set(local "")
        if(EXISTS ${file_dir}/${header})
          get_filename_component(local ${file_dir}/${header} ABSOLUTE)
        endif()
        set(resolved "")
        if(hit_count EQUAL 0 AND local)
          list(APPEND found "${shown}: #include \"${header}\" is found only next to the file: write it from the ${name} floor's include path (e.g. \"<folder>/${header}\")")
        elseif(hit_count EQUAL 0)
          list(APPEND found "${shown}: #include \"${header}\" is not in the ${name} floor or below it")
        elseif(hit_count GREATER 1 OR (local AND NOT local STREQUAL hits))
          set(named ${hits} ${local})
          list(REMOVE_DUPLICATES named)
          list(TRANSFORM named REPLACE "^${SOURCE_DIR}/" "")
          list(JOIN named " and " named)
          list(APPEND found "${shown}: #include \"${header}\" names more than one file (${named}): rename one")
        else()
          set(resolved ${hits})
          set(inside FALSE)
          foreach(allowed ${SOURCE_DIR}/${dir} ${arg_ALLOWED})
            string(FIND "${resolved}" "${allowed}/" at)
            if(at EQUAL 0)
              set(inside TRUE)
            endif()
          endforeach()
          if(NOT inside)
            list(APPEND found "${shown}: #include \"${header}\" is not in the ${name} floor or below it")
          endif()
        endif()
        if(arg_SIBLINGS AND resolved)
          string(FIND "${resolved}" "${SOURCE_DIR}/${dir}/" at)
          if(at EQUAL 0)
            file(RELATIVE_PATH target ${SOURCE_DIR}/${dir} ${resolved})
            string(REGEX MATCH "^[^/]+/" target_folder "${target}")
            if(target_folder AND NOT target_folder STREQUAL own_folder)
              list(APPEND found "${shown}: #include \"${header}\" is a file of the command in ${dir}/${target_folder}: what more than one command uses lives in ${dir}/ itself")
            endif()
          endif()
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
set(launcher ${SOURCE_DIR}/launcher)
set(runtime ${launcher}/runtime)

check_floor(core core SEARCH ${core_include} ${SOURCE_DIR}/core/src ALLOWED ""
            FORBIDDEN_ANGLE "CLI/" "slurm/" "nlohmann/" "nccl" "cuda")
check_floor(runtime launcher/runtime SEARCH ${runtime} ${core_include} ALLOWED ${core_include}
            FORBIDDEN_ANGLE "CLI/" "slurm/")
check_floor(train launcher/train SEARCH ${launcher} ${runtime} ${core_include} ALLOWED ${runtime} ${core_include}
            FORBIDDEN_ANGLE "CLI/" "slurm/")
check_floor(reporting launcher/reporting SEARCH ${launcher} ${runtime} ${core_include}
            ALLOWED ${launcher}/train ${runtime} ${core_include}
            FORBIDDEN_ANGLE "CLI/" "slurm/")
check_floor(commands launcher/commands SIBLINGS SEARCH ${launcher}/commands ${launcher} ${runtime} ${core_include}
            ALLOWED ${launcher}/reporting ${launcher}/train ${runtime} ${core_include}
            FORBIDDEN_ANGLE "slurm/")

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "floors check: an include breaks the floors (core -> runtime -> train -> reporting -> commands -> main; "
                      "no command includes another's files):\n  ${text}\n"
                      "Move the shared code down a floor (or to launcher/commands/ for code commands share), or pass "
                      "what is needed in as a plain struct.")
endif()
message(STATUS "floors check: each floor includes only itself and the floors below; no command includes another's files")
