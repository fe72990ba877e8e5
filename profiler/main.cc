// llmplan-profile: measures the kernels of transformer layers and the NCCL
// collectives of this machine and writes a profile JSON for the simulator.
// See profiler/README.md.
//
// Exit status: 0 success (also --help, --version and --list), 1 a
// measurement or I/O failure, 2 bad flags (also --precision fp8 on a GPU
// without FP8), 3 no CUDA GPU visible. Every
// failure is one line on stderr. --help, --version and --list need no GPU.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "base/version.h"
#include "profiler/collectives_bench.h"
#include "profiler/cuda_util.h"
#include "profiler/cupti_timer.h"
#include "profiler/gemm_ops.h"
#include "profiler/gpu_info.h"
#include "profiler/kernel_bench.h"
#include "profiler/kernel_plan.h"
#include "profiler/moe_bench.h"
#include "profiler/moe_profile_json.h"
#include "profiler/options.h"
#include "simulator/profile_table_json.h"

namespace llmplan::profiler {
namespace {

Status write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return Status::io_error(path + ": cannot open for writing");
  out << text;
  out.close();
  if (!out) return Status::io_error(path + ": write failed");
  return Status();
}

Status measure_kernels(const ProfileOptions& o, const std::vector<KernelJob>& jobs,
                       simulator::Profile* profile) {
  LLMPLAN_ASSIGN_OR_RETURN(std::unique_ptr<BenchSession> session, BenchSession::start());
  const BenchSettings settings{o.warmup, o.repeats};
  for (size_t i = 0; i < jobs.size(); ++i) {
    const KernelJob& job = jobs[i];
    std::string skipped;
    LLMPLAN_ASSIGN_OR_RETURN(std::optional<simulator::ProfileKernel> k,
                             measure_kernel_job(job, settings, session->stream(), session->gemm(),
                                                session->timer(), &skipped));
    const char* kind = simulator::kernel_kind_name(job.desc.kind);
    const char* pass = simulator::pass_name(job.desc.pass);
    if (!k) {
      std::fprintf(stderr, "[%zu/%zu] %s %s: skipped (%s)\n", i + 1, jobs.size(), kind, pass,
                   skipped.c_str());
      profile->notes.push_back("not measured: " + skipped);
      continue;
    }
    if (simulator::is_shape_keyed(job.desc.kind)) {
      std::fprintf(
          stderr, "[%zu/%zu] %s %s m=%lld n=%lld k=%lld batch=%lld: %.1f us, %.1f TFLOP/s\n", i + 1,
          jobs.size(), kind, pass, static_cast<long long>(k->gemm.m),
          static_cast<long long>(k->gemm.n), static_cast<long long>(k->gemm.k),
          static_cast<long long>(k->gemm.batch), k->time_s * 1e6, k->flops / k->time_s / 1e12);
    } else {
      std::fprintf(stderr, "[%zu/%zu] %s %s %.0f bytes: %.1f us, %.0f GB/s\n", i + 1, jobs.size(),
                   kind, pass, k->bytes, k->time_s * 1e6, k->bytes / k->time_s / 1e9);
    }
    profile->kernels.push_back(std::move(*k));
  }
  return Status();
}

// --moe: the MoE kernel set into its own JSON file (moe_profile_json.h).
int run_moe(const ProfileOptions& o, const std::vector<MoeJob>& jobs, int gpus) {
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "llmplan-profile: error: %s\n", s.message().c_str());
    return 1;
  };
  MoeProfile profile;
  profile.header.llmplan_version = project_version();
  profile.header.date = utc_now_iso8601();
  profile.header.host = host_name();
  profile.header.software = software_versions();
  profile.header.timing = {"cupti_activity", o.warmup, o.repeats, "median"};
  profile.command_line = o.command_line;
  profile.settings = o.moe_settings;
  if (Status s = to_status(cudaSetDevice(o.device), "cudaSetDevice"); !s.ok()) return fail(s);
  Result<simulator::ProfileGpu> gpu = describe_gpu(o.device, gpus);
  if (!gpu.ok()) return fail(gpu.status());
  profile.header.gpu = *gpu;
  std::fprintf(stderr, "llmplan-profile: %zu MoE kernels on GPU %d (%s)\n", jobs.size(), o.device,
               gpu->name.c_str());
  if (Status s = measure_moe_jobs(jobs, {o.warmup, o.repeats}, &profile); !s.ok()) return fail(s);
  Result<std::string> text = moe_profile_to_json(profile);
  if (!text.ok()) return fail(text.status());
  if (Status s = write_file(o.output_path, *text); !s.ok()) return fail(s);
  std::fprintf(stderr, "llmplan-profile: wrote %s (%zu MoE kernels, %zu skipped)\n",
               o.output_path.c_str(), profile.entries.size(), profile.notes.size());
  return 0;
}

int run(int argc, char** argv) {
  Result<ProfileOptions> parsed = parse_profile_args(argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "llmplan-profile: error: %s\n", parsed.status().message().c_str());
    return 2;
  }
  const ProfileOptions& o = *parsed;
  if (o.show_help) {
    std::fputs(o.help_text.c_str(), stdout);
    return 0;
  }
  if (o.show_version) {
    std::printf("%s\n", version_line("llmplan-profile").c_str());
    return 0;
  }
  std::vector<MoeJob> moe_jobs;
  std::vector<KernelJob> jobs;
  std::vector<double> sizes;
  if (o.moe) {
    moe_jobs = plan_moe_jobs(o.moe_settings);
  } else {
    jobs = plan_kernel_jobs(o.shapes, o.precisions);
    sizes = collective_sizes(o.collective_min_bytes, o.collective_max_bytes);
  }
  if (o.list_only && o.moe) {
    std::fputs(format_moe_plan(o.moe_settings, moe_jobs).c_str(), stdout);
    return 0;
  }
  if (o.list_only) {
    for (const std::string& s : o.skipped_shapes) std::printf("skipped shape: %s\n", s.c_str());
    std::fputs(format_plan(o.shapes, jobs, sizes, o.collectives).c_str(), stdout);
    return 0;
  }
  Result<int> gpus = visible_gpu_count();
  if (!gpus.ok()) {
    std::fprintf(stderr, "llmplan-profile: error: %s\n", gpus.status().message().c_str());
    return 3;
  }
  if (o.device >= *gpus) {
    std::fprintf(stderr, "llmplan-profile: error: --device %d: only %d GPU(s) visible\n", o.device,
                 *gpus);
    return 2;
  }
  if (o.moe) return run_moe(o, moe_jobs, *gpus);

  simulator::Profile profile;
  profile.llmplan_version = project_version();
  profile.date = utc_now_iso8601();
  profile.host = host_name();
  profile.software = software_versions();
  profile.timing = {"cupti_activity", o.warmup, o.repeats, "median"};
  profile.shapes = o.shapes;
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "llmplan-profile: error: %s\n", s.message().c_str());
    return 1;
  };
  if (Status s = to_status(cudaSetDevice(o.device), "cudaSetDevice"); !s.ok()) return fail(s);
  Result<simulator::ProfileGpu> gpu = describe_gpu(o.device, *gpus);
  if (!gpu.ok()) return fail(gpu.status());
  profile.gpu = *gpu;
  if (Status s = check_gpu_precisions(o.precisions, profile.gpu, o.device); !s.ok()) {
    std::fprintf(stderr, "llmplan-profile: error: %s\n", s.message().c_str());
    return 2;
  }
  for (const std::string& n : unmeasured_kernel_notes()) profile.notes.push_back(n);
  for (const KernelJob& j : jobs) {
    if (j.desc.kind == simulator::KernelKind::kFlashAttention) {
      profile.notes.push_back(
          "flash_attention measured with llmplan-profile's own FlashAttention-2-style kernel "
          "(causal, bf16 WMMA; see profiler/README.md): slower than FlashAttention-2/3 or "
          "cuDNN, so its times are an upper bound");
      break;
    }
  }
  std::fprintf(stderr, "llmplan-profile: %zu kernels on GPU %d (%s)\n", jobs.size(), o.device,
               profile.gpu.name.c_str());
  if (Status s = measure_kernels(o, jobs, &profile); !s.ok()) return fail(s);

  if (!o.collectives) {
    profile.notes.push_back("collectives not measured (--no-collectives)");
  } else if (*gpus < 2) {
    profile.notes.push_back("collectives not measured: only one GPU is visible");
    std::fprintf(stderr, "llmplan-profile: one GPU visible, collectives skipped\n");
  } else {
    std::fprintf(stderr, "llmplan-profile: collectives on %d GPUs\n", *gpus);
    Result<std::vector<simulator::ProfileCollective>> c = measure_collectives(*gpus, sizes);
    if (!c.ok()) return fail(c.status());
    profile.collectives = std::move(*c);
  }
  if (Status s = simulator::validate(profile); !s.ok()) return fail(s);
  if (Status s = write_file(o.output_path, simulator::profile_to_json(profile)); !s.ok()) {
    return fail(s);
  }
  std::fprintf(stderr, "llmplan-profile: wrote %s (%zu kernels, %zu collective curves)\n",
               o.output_path.c_str(), profile.kernels.size(), profile.collectives.size());
  return 0;
}

}  // namespace
}  // namespace llmplan::profiler

int main(int argc, char** argv) { return llmplan::profiler::run(argc, argv); }
