#include "profiler/collectives_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "profiler/cuda_util.h"
#include "profiler/kernel_plan.h"

namespace llmplan::profiler {
namespace {

using simulator::CollectiveKind;

constexpr int kWarmup = 5;
constexpr int kTrials = 3;
constexpr size_t kElem = 4;  // float32

// Communicators, streams and buffers of one group of the first g GPUs.
class Group {
 public:
  ~Group() {
    for (size_t i = 0; i < comms_.size(); ++i) {
      cudaSetDevice(static_cast<int>(i));
      if (comms_[i] != nullptr) ncclCommDestroy(comms_[i]);
      if (streams_[i] != nullptr) cudaStreamDestroy(streams_[i]);
    }
  }

  Status init(int g, size_t max_bytes) {
    comms_.assign(static_cast<size_t>(g), nullptr);
    streams_.assign(static_cast<size_t>(g), nullptr);
    std::vector<int> devs(static_cast<size_t>(g));
    for (int i = 0; i < g; ++i) devs[static_cast<size_t>(i)] = i;
    LLMPLAN_CUDA_TRY(ncclCommInitAll(comms_.data(), g, devs.data()));
    for (int i = 0; i < g; ++i) {
      LLMPLAN_CUDA_TRY(cudaSetDevice(i));
      LLMPLAN_CUDA_TRY(
          cudaStreamCreateWithFlags(&streams_[static_cast<size_t>(i)], cudaStreamNonBlocking));
      LLMPLAN_ASSIGN_OR_RETURN(DeviceBuffer send, DeviceBuffer::allocate(max_bytes));
      LLMPLAN_ASSIGN_OR_RETURN(DeviceBuffer recv, DeviceBuffer::allocate(max_bytes));
      LLMPLAN_CUDA_TRY(cudaMemset(send.get(), 0, max_bytes));
      LLMPLAN_CUDA_TRY(cudaMemset(recv.get(), 0, max_bytes));
      send_.push_back(std::move(send));
      recv_.push_back(std::move(recv));
    }
    return Status();
  }

  // Enqueues one operation on every rank; `bytes` as in CollectiveDesc.
  Status enqueue(CollectiveKind kind, size_t count) {
    const int g = static_cast<int>(comms_.size());
    LLMPLAN_CUDA_TRY(ncclGroupStart());
    for (int i = 0; i < g; ++i) {
      const size_t r = static_cast<size_t>(i);
      void* in = send_[r].get();
      void* out = recv_[r].get();
      switch (kind) {
        case CollectiveKind::kAllReduce:
          LLMPLAN_CUDA_TRY(
              ncclAllReduce(in, out, count, ncclFloat32, ncclSum, comms_[r], streams_[r]));
          break;
        case CollectiveKind::kAllGather:  // count: elements each rank contributes
          LLMPLAN_CUDA_TRY(ncclAllGather(in, out, count, ncclFloat32, comms_[r], streams_[r]));
          break;
        case CollectiveKind::kReduceScatter:  // count: elements each rank receives
          LLMPLAN_CUDA_TRY(
              ncclReduceScatter(in, out, count, ncclFloat32, ncclSum, comms_[r], streams_[r]));
          break;
        case CollectiveKind::kSendRecv:  // rank 0 -> rank 1
          if (i == 0) LLMPLAN_CUDA_TRY(ncclSend(in, count, ncclFloat32, 1, comms_[r], streams_[r]));
          if (i == 1)
            LLMPLAN_CUDA_TRY(ncclRecv(out, count, ncclFloat32, 0, comms_[r], streams_[r]));
          break;
        case CollectiveKind::kAllToAll: {  // count: elements of the send buffer, count/g per peer
          const size_t chunk = count / static_cast<size_t>(g);
          const size_t chunk_bytes = chunk * sizeof(float);
          for (int j = 0; j < g; ++j) {
            const size_t off = static_cast<size_t>(j) * chunk_bytes;
            LLMPLAN_CUDA_TRY(ncclSend(static_cast<char*>(in) + off, chunk, ncclFloat32, j,
                                      comms_[r], streams_[r]));
            LLMPLAN_CUDA_TRY(ncclRecv(static_cast<char*>(out) + off, chunk, ncclFloat32, j,
                                      comms_[r], streams_[r]));
          }
          break;
        }
      }
    }
    LLMPLAN_CUDA_TRY(ncclGroupEnd());
    return Status();
  }

  Status synchronize() {
    for (size_t i = 0; i < streams_.size(); ++i) {
      LLMPLAN_CUDA_TRY(cudaSetDevice(static_cast<int>(i)));
      LLMPLAN_CUDA_TRY(cudaStreamSynchronize(streams_[i]));
    }
    return Status();
  }

  // Seconds per operation: median over trials of back-to-back loops.
  Result<double> time(CollectiveKind kind, size_t count, int iters) {
    for (int i = 0; i < kWarmup; ++i) LLMPLAN_RETURN_IF_ERROR(enqueue(kind, count));
    LLMPLAN_RETURN_IF_ERROR(synchronize());
    std::vector<double> trials;
    for (int t = 0; t < kTrials; ++t) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) LLMPLAN_RETURN_IF_ERROR(enqueue(kind, count));
      LLMPLAN_RETURN_IF_ERROR(synchronize());
      const std::chrono::duration<double> d = std::chrono::steady_clock::now() - start;
      trials.push_back(d.count() / iters);
    }
    std::sort(trials.begin(), trials.end());
    return trials[trials.size() / 2];
  }

 private:
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  std::vector<DeviceBuffer> send_, recv_;
};

// Elements per rank for a buffer of `bytes` (nccl-tests' size) on g ranks.
size_t element_count(CollectiveKind kind, double bytes, int g) {
  const size_t total = static_cast<size_t>(bytes) / kElem;
  switch (kind) {
    case CollectiveKind::kAllGather:      // bytes = gathered output
    case CollectiveKind::kReduceScatter:  // bytes = input
      return total / static_cast<size_t>(g);
    default:
      return total;
  }
}

// The bytes an operation on `count` elements per rank moves, in the same sense.
double buffer_bytes(CollectiveKind kind, size_t count, int g) {
  const double b = static_cast<double>(count * kElem);
  return kind == CollectiveKind::kAllGather || kind == CollectiveKind::kReduceScatter ? b * g : b;
}

}  // namespace

Result<std::vector<simulator::ProfileCollective>> measure_collectives(
    int gpus, const std::vector<double>& sizes_bytes) {
  LLMPLAN_CHECK(gpus >= 2 && !sizes_bytes.empty());
  const size_t max_bytes = static_cast<size_t>(sizes_bytes.back());
  std::vector<simulator::ProfileCollective> out;
  for (int g : collective_group_sizes(gpus)) {
    Group group;
    LLMPLAN_RETURN_IF_ERROR(group.init(g, max_bytes));
    std::vector<CollectiveKind> kinds = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                                         CollectiveKind::kReduceScatter,
                                         CollectiveKind::kAllToAll};
    if (g == 2) kinds.push_back(CollectiveKind::kSendRecv);
    for (CollectiveKind kind : kinds) {
      simulator::ProfileCollective c;
      c.kind = kind;
      c.group_size = g;
      c.ranks_per_node = g;
      c.dtype = "float32";
      for (double bytes : sizes_bytes) {
        const size_t count = element_count(kind, bytes, g);
        if (count == 0) continue;
        const double b = buffer_bytes(kind, count, g);
        if (!c.curve.bytes.empty() && b <= c.curve.bytes.back()) continue;
        const int iters = bytes <= (64 << 20) ? 20 : 5;
        LLMPLAN_ASSIGN_OR_RETURN(double t, group.time(kind, count, iters));
        c.curve.bytes.push_back(b);
        c.curve.seconds.push_back(t);
        std::fprintf(stderr, "  %s g=%d %.0f B: %.2f us\n", simulator::collective_kind_name(kind),
                     g, b, t * 1e6);
      }
      if (!c.curve.bytes.empty()) out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace llmplan::profiler
