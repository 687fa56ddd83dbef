# One place for compiler flags every target shares.
add_library(gpudirect_warnings INTERFACE)
target_compile_options(gpudirect_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                            -Wnon-virtual-dtor -Wold-style-cast -Wcast-align>)
# CUDA sources (launcher/train/cuda/*.cu): nvcc's own warnings, and the host compiler's on the host code.
target_compile_options(gpudirect_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wshadow,-Wnon-virtual-dtor>)
if(GPUDIRECT_WERROR)
  target_compile_options(gpudirect_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>
                         $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings -Xcompiler=-Werror>)
endif()
if(GPUDIRECT_SANITIZE)
  # Host compilers only: nvcc does not take these flags (device code is not sanitized).
  target_compile_options(gpudirect_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(gpudirect_warnings INTERFACE -fsanitize=address,undefined)
endif()
