# Writes each fenced ```cpp block of INPUT (a Markdown file) to OUTPUT_DIR/block_<i>.cpp,
# i from 1, and fails when the file has fewer than EXPECTED blocks: an example that was
# renamed to ```c++ or lost its fence would otherwise stop being compiled unnoticed.
# Run with cmake -P at build time (tests/docs/CMakeLists.txt); redlock_markdown_cpp_blocks
# below is also included at configure time to count the blocks.

# CMake lists split on ";" and pair "[" with "]", so those characters travel escaped
# (<semicolon>, <lbracket>, <rbracket>) until a block is written out.
function(redlock_markdown_cpp_blocks input out_blocks)
  file(READ "${input}" content)
  string(REPLACE ";" "<semicolon>" content "${content}")
  string(REPLACE "[" "<lbracket>" content "${content}")
  string(REPLACE "]" "<rbracket>" content "${content}")
  string(REPLACE "\n" ";" lines "${content}")
  set(blocks "")
  set(inside OFF)
  set(current "")
  foreach(line IN LISTS lines)
    if(NOT inside AND line MATCHES "^```cpp[ \t]*$")
      set(inside ON)
      set(current "")
    elseif(inside AND line MATCHES "^```[ \t]*$")
      set(inside OFF)
      list(APPEND blocks "${current}")
    elseif(inside)
      string(APPEND current "${line}\n")
    endif()
  endforeach()
  if(inside)
    message(FATAL_ERROR "${input}: a ```cpp block is not closed")
  endif()
  set(${out_blocks} "${blocks}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  redlock_markdown_cpp_blocks("${INPUT}" blocks)
  list(LENGTH blocks count)
  if(count LESS EXPECTED)
    message(FATAL_ERROR "${INPUT} has ${count} ```cpp blocks, ${EXPECTED} expected")
  endif()
  set(i 0)
  foreach(block IN LISTS blocks)
    math(EXPR i "${i} + 1")
    string(REPLACE "<semicolon>" ";" block "${block}")
    string(REPLACE "<lbracket>" "[" block "${block}")
    string(REPLACE "<rbracket>" "]" block "${block}")
    file(WRITE "${OUTPUT_DIR}/block_${i}.cpp.new"
         "// Extracted from ${INPUT}, ```cpp block ${i}: edit the Markdown, not this file.\n${block}")
    file(COPY_FILE "${OUTPUT_DIR}/block_${i}.cpp.new" "${OUTPUT_DIR}/block_${i}.cpp" ONLY_IF_DIFFERENT)
    file(REMOVE "${OUTPUT_DIR}/block_${i}.cpp.new")
  endforeach()
endif()
