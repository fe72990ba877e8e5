#include "scaling/solver_log.h"

#include <glog/logging.h>

namespace llmplan::scaling {

void silence_solver_logging() {
  FLAGS_minloglevel = google::GLOG_FATAL;
  FLAGS_stderrthreshold = google::GLOG_FATAL;
}

}  // namespace llmplan::scaling
