# Compile settings every dlbench target shares: C++20 and warnings as errors for our code.
option(DLBENCH_SANITIZE "Instrument with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
set(DLBENCH_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer)
function(dlbench_defaults target)
  if(DLBENCH_SANITIZE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${DLBENCH_SANITIZE_FLAGS}>)
    target_link_options(${target} PRIVATE ${DLBENCH_SANITIZE_FLAGS})
  endif()
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra -Werror=all-warnings>)
  if(DLBENCH_SANITIZE)
    # GCC's flow analysis under ASan reports maybe-uninitialized inside libstdc++ (std::regex,
    # std::function) where nothing is uninitialized; the sanitizer itself checks the real thing.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
  endif()
endfunction()
