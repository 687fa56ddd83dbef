# cmake -DLAUNCH=... -DOUT_DIR=... -DWORK_DIR=... -DVERSION=... -DHELP2MAN=... -DGZIP=... -DSTAMP=... -P
# generate_man_pages.cmake (cmake/ManPages.cmake runs it): gpudirect-launch.1.gz from `--help`, and
# gpudirect-launch-SUB.1.gz from `SUB --help` for every subcommand the main help lists.
cmake_minimum_required(VERSION 3.25)  # policies as the project has them (CMP0054: a quoted "(" is a string)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/bin)
file(GLOB old_pages ${OUT_DIR}/*.1.gz)
if(old_pages)
  file(REMOVE ${old_pages})  # a subcommand that is gone loses its page
endif()
# Run by name from PATH, so that the usage lines say "gpudirect-launch", not the build path.
file(CREATE_LINK ${LAUNCH} ${WORK_DIR}/bin/gpudirect-launch SYMBOLIC)
set(ENV{PATH} "${WORK_DIR}/bin:$ENV{PATH}")
# A sanitizer build (preset ci-asan) judges leaks at exit; --help is not where that is tested.
set(ENV{ASAN_OPTIONS} "detect_leaks=0")

execute_process(COMMAND gpudirect-launch --help OUTPUT_VARIABLE help RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "gpudirect-launch --help failed (${failed})")
endif()

# what_it_does(<out> <text>): the whatis line of a subcommand: its description without the
# parenthesised parts, up to the first '. ', ': ' or '; '.
function(what_it_does out text)
  string(REPLACE "<semicolon>" ";" text "${text}")
  set(previous "")
  while(NOT text STREQUAL previous)
    set(previous "${text}")
    string(REGEX REPLACE " ?\\([^()]*\\)" "" text "${text}")
  endwhile()
  string(REGEX REPLACE "[.:;] .*$" "" text "${text}")
  string(REGEX REPLACE "[.]$" "" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# The main help: "gpudirect-launch: <what it is>" first, then "Subcommands:" and one line each.
string(REGEX MATCH "^gpudirect-launch: ([^\n]*)" _ "${help}")
set(main_name "${CMAKE_MATCH_1}")
string(REGEX MATCH "\nSubcommands:\n(.*)" _ "${help}")
string(REGEX REPLACE "\n\n.*" "" listing "${CMAKE_MATCH_1}")
string(REPLACE ";" "<semicolon>" listing "${listing}")  # a CMake list separator
string(REPLACE "\n" ";" listing "${listing}")
set(subcommands "")
foreach(line IN LISTS listing)
  if(line MATCHES "^  ([a-z][a-z0-9-]*)  +(.*)$")
    list(APPEND subcommands ${CMAKE_MATCH_1})
    what_it_does(description "${CMAKE_MATCH_2}")
    set(description_${CMAKE_MATCH_1} "${description}")
  endif()
endforeach()
if(NOT main_name OR NOT subcommands)
  message(FATAL_ERROR "gpudirect-launch --help: no description line or no Subcommands: section to make manual pages from:\n${help}")
endif()

# page(<program> <name line> <see also>): help2man, then gzip -9n as Debian wants man pages.
function(page program name see_also)
  file(WRITE ${WORK_DIR}/${program}.h2m "[SEE ALSO]\n${see_also}\n")
  execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr --version-string=${VERSION} --section=1
                          --source=gpudirect-slurm "--name=${name}" --include=${WORK_DIR}/${program}.h2m
                          --output=${WORK_DIR}/${program}.1 ${program}
                  RESULT_VARIABLE failed ERROR_VARIABLE error)
  if(failed)
    message(FATAL_ERROR "help2man ${program} failed: ${error}")
  endif()
  execute_process(COMMAND ${GZIP} -9 -n -c ${WORK_DIR}/${program}.1 OUTPUT_FILE ${OUT_DIR}/${program}.1.gz RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "gzip ${program}.1 failed")
  endif()
endfunction()

set(main_see_also "")
foreach(sub IN LISTS subcommands)
  if(main_see_also)
    string(APPEND main_see_also ",\n")
  endif()
  string(APPEND main_see_also ".BR gpudirect-launch-${sub} (1)")
  # A command of its own for help2man: `gpudirect-launch-SUB --help` is `gpudirect-launch SUB --help`.
  file(WRITE ${WORK_DIR}/bin/gpudirect-launch-${sub} "#!/bin/sh\nexec gpudirect-launch ${sub} \"$@\"\n")
  file(CHMOD ${WORK_DIR}/bin/gpudirect-launch-${sub} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  page(gpudirect-launch-${sub} "${description_${sub}}" ".BR gpudirect-launch (1)")
endforeach()
page(gpudirect-launch "${main_name}" "${main_see_also}")
file(TOUCH ${STAMP})
