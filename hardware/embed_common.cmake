# Helpers shared by embed_presets.cmake and embed_text.cmake (both run with cmake -P at build time).

# Fails the build when FILE's CONTENT would end the C++ raw string it is embedded in.
function(parsim_check_raw_string content file)
  string(FIND "${content}" ")parsim_json\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} contains the raw-string delimiter )parsim_json\"")
  endif()
endfunction()

# Writes BODY to OUT only when the text changed, so an unchanged input does not recompile.
function(parsim_write_if_changed out body)
  if(EXISTS "${out}")
    file(READ "${out}" old)
    if(old STREQUAL body)
      return()
    endif()
  endif()
  file(WRITE "${out}" "${body}")
endfunction()
