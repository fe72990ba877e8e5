# Runs llmplan-profile as a CTest test (cmake -P). Variables: PROFILER (the
# executable), MODE (list or run), WORK_DIR (scratch folder).
#
# MODE=list: `--list` needs no GPU on any machine: exit 0, the plan on stdout,
# nothing on stderr; also with --moe, and a bad --moe flag is exit 2 with one
# line on stderr.
# MODE=run: a real (small) measurement. Where no CUDA GPU is visible (CI, the
# developers' machines) it must exit 3 with exactly one stderr line
# "llmplan-profile: error: no CUDA GPU is visible (...)" and write nothing.
# Where a GPU is visible it must exit 0 and write a profile with kernels in it.
# The test thus holds on both kinds of machine without detecting GPUs at
# configure time; any other outcome (a crash, exit 1 from a CUDA/CUPTI error,
# a multi-line message) fails it.
file(MAKE_DIRECTORY "${WORK_DIR}")
set(shape_flags --hidden 256 --heads 4 --seq 128 --micro-batch 1 --tp 1,2)
set(moe_flags --moe --moe-hidden 256 --moe-experts 8 --moe-top-k 2 --moe-expert-ffn 128
              --moe-local-experts 1,4 --moe-m 16,64 --moe-tokens 128)

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
  execute_process(COMMAND "${PROFILER}" --list ${moe_flags}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT err STREQUAL "")
    message(FATAL_ERROR "--moe --list exited ${rc}: ${err}")
  endif()
  foreach(expect "h=256 E=8 k=2 f=128 softmax"
                 "expert_fc1 fwd strided_batched balanced e=4 m=64 n=256 k=256"
                 "expert_fc2 bwd_weight loop skewed e=4 m=16 n=256 k=128"
                 "router_topk bwd softmax T=128 E=8 k=2" "unpermute bwd T=128 k=2 h=256")
    string(FIND "${out}" "${expect}" pos)
    if(pos EQUAL -1)
      message(FATAL_ERROR "--moe --list lacks \"${expect}\":\n${out}")
    endif()
  endforeach()
  execute_process(COMMAND "${PROFILER}" --list ${moe_flags} --moe-top-k 9
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "\n$" "" line "${err}")
  if(NOT rc EQUAL 2 OR NOT line MATCHES "^llmplan-profile: error: --moe-top-k[^\n]*$")
    message(FATAL_ERROR "bad --moe-top-k: expected exit 2 and one line, got ${rc}: ${err}")
  endif()
  return()
endif()

# Each of the two runs (layer shapes, then --moe) must give exit 0 and a file
# of its kind, or exit 3 and one line.
function(check_run name kind)
  set(profile "${WORK_DIR}/${name}.json")
  file(REMOVE "${profile}")
  execute_process(COMMAND "${PROFILER}" ${ARGN} --warmup 1 --repeats 3 -o "${profile}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    # A GPU is visible: the run must have produced a usable file.
    if(NOT EXISTS "${profile}")
      message(FATAL_ERROR "${name}: exit 0 but no profile written")
    endif()
    file(READ "${profile}" text)
    if(kind STREQUAL "llmplan-profile")
      string(JSON format GET "${text}" format)
    else()
      string(JSON format GET "${text}" kind)
    endif()
    string(JSON kernels LENGTH "${text}" kernels)
    if(NOT format STREQUAL kind OR kernels EQUAL 0)
      message(FATAL_ERROR "${name}: profile is '${format}' with ${kernels} kernels")
    endif()
    message(STATUS "${name}: a GPU is visible: measured ${kernels} kernels")
    return()
  endif()
  if(NOT rc EQUAL 3)
    message(FATAL_ERROR "${name}: expected exit 3 (no GPU) or 0 (GPU), got ${rc}:\n${err}")
  endif()
  string(REGEX REPLACE "\n$" "" line "${err}")
  string(FIND "${line}" "\n" newline)
  if(NOT newline EQUAL -1 OR line STREQUAL "")
    message(FATAL_ERROR "${name}: expected one line on stderr, got:\n${err}")
  endif()
  if(NOT line MATCHES "^llmplan-profile: error: no CUDA GPU is visible \\(.+\\)$")
    message(FATAL_ERROR "${name}: unexpected message: ${line}")
  endif()
  if(NOT out STREQUAL "" OR EXISTS "${profile}")
    message(FATAL_ERROR "${name}: wrote output without a GPU")
  endif()
  message(STATUS "${name}: no GPU: ${line}")
endfunction()

check_run(profile llmplan-profile ${shape_flags} --no-collectives)
check_run(moe llmplan-moe-profile ${moe_flags})
