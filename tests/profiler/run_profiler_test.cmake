# Runs llmplan-profile as a CTest test (cmake -P). Variables: PROFILER (the
# executable), MODE (list or run), WORK_DIR (scratch folder).
#
# MODE=list: `--list` needs no GPU on any machine: exit 0, the plan on stdout,
# nothing on stderr.
# MODE=run: a real (small) measurement. Where no CUDA GPU is visible (CI, the
# developers' machines) it must exit 3 with exactly one stderr line
# "llmplan-profile: error: no CUDA GPU is visible (...)" and write nothing.
# Where a GPU is visible it must exit 0 and write a profile with kernels in it.
# The test thus holds on both kinds of machine without detecting GPUs at
# configure time; any other outcome (a crash, exit 1 from a CUDA/CUPTI error,
# a multi-line message) fails it.
file(MAKE_DIRECTORY "${WORK_DIR}")
set(shape_flags --hidden 256 --heads 4 --seq 128 --micro-batch 1 --tp 1,2)

if(MODE STREQUAL "list")
  # Default precision (bf16), then bf16 and fp8 together: the FP8 GEMMs and
  # casts join the bf16 kernels, which are listed once.
  foreach(precision bf16 bf16,fp8)
    execute_process(COMMAND "${PROFILER}" --list ${shape_flags} --precision ${precision}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "--list exited ${rc}: ${err}")
    endif()
    if(NOT err STREQUAL "")
      message(FATAL_ERROR "--list wrote to stderr: ${err}")
    endif()
    set(expected "qkv_gemm          fwd        bf16" "fc2_gemm          bwd_weight"
                 "optimizer_step" "h=256 a=4 g=4 f=1024 s=128 b=1 t=2"
                 "flash_attention   fwd        bf16 m=128 n=128 k=64 batch=4"
                 "flash_attention   bwd        bf16" "embedding and cross_entropy not measured")
    set(absent)
    if(precision STREQUAL "bf16,fp8")
      list(APPEND expected "qkv_gemm          fwd        fp8" "fc1_gemm          bwd_weight fp8"
                  "fp8_cast_transpose fwd        fp8" "fp8_cast_transpose bwd        fp8")
      list(APPEND absent "flash_attention   fwd        fp8" "layernorm         fwd        fp8")
    else()
      list(APPEND absent "fp8")
    endif()
    foreach(expect IN LISTS expected)
      string(FIND "${out}" "${expect}" pos)
      if(pos EQUAL -1)
        message(FATAL_ERROR "--list --precision ${precision} lacks \"${expect}\":\n${out}")
      endif()
    endforeach()
    foreach(unexpected IN LISTS absent)
      string(FIND "${out}" "${unexpected}" pos)
      if(NOT pos EQUAL -1)
        message(FATAL_ERROR "--list --precision ${precision} has \"${unexpected}\":\n${out}")
      endif()
    endforeach()
  endforeach()
  return()
endif()

set(profile "${WORK_DIR}/profile.json")
file(REMOVE "${profile}")
execute_process(COMMAND "${PROFILER}" ${shape_flags} --no-collectives --warmup 1 --repeats 3
                        -o "${profile}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  # A GPU is visible: the run must have produced a usable profile.
  if(NOT EXISTS "${profile}")
    message(FATAL_ERROR "exit 0 but no profile written")
  endif()
  file(READ "${profile}" text)
  string(JSON format GET "${text}" format)
  string(JSON kernels LENGTH "${text}" kernels)
  if(NOT format STREQUAL "llmplan-profile" OR kernels EQUAL 0)
    message(FATAL_ERROR "profile has format '${format}' and ${kernels} kernels")
  endif()
  message(STATUS "a GPU is visible: measured ${kernels} kernels")
  return()
endif()

if(NOT rc EQUAL 3)
  message(FATAL_ERROR "expected exit 3 (no GPU) or 0 (GPU), got ${rc}:\n${err}")
endif()
string(REGEX REPLACE "\n$" "" line "${err}")
string(FIND "${line}" "\n" newline)
if(NOT newline EQUAL -1 OR line STREQUAL "")
  message(FATAL_ERROR "expected one line on stderr, got:\n${err}")
endif()
if(NOT line MATCHES "^llmplan-profile: error: no CUDA GPU is visible \\(.+\\)$")
  message(FATAL_ERROR "unexpected message: ${line}")
endif()
if(NOT out STREQUAL "" OR EXISTS "${profile}")
  message(FATAL_ERROR "wrote output without a GPU")
endif()
message(STATUS "no GPU: ${line}")
