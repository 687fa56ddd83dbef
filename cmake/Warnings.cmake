# One place for compiler flags every target shares.
add_library(gpudirect_warnings INTERFACE)
target_compile_options(gpudirect_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                            -Wnon-virtual-dtor -Wold-style-cast -Wcast-align>)
if(GPUDIRECT_WERROR)
  target_compile_options(gpudirect_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
if(GPUDIRECT_SANITIZE)
  # Host compilers only: nvcc does not take these flags (device code is not sanitized).
  target_compile_options(gpudirect_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(gpudirect_warnings INTERFACE -fsanitize=address,undefined)
endif()
