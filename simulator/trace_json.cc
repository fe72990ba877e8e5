#include "simulator/trace_json.h"

#include <boost/json.hpp>

#include "simulator/lowering.h"

namespace llmplan::simulator {

std::string chrome_trace_json(const StepReport& report) {
  boost::json::array events;
  const int stages = static_cast<int>(report.stages.size());
  for (int r = 0; r < stages; ++r) {
    boost::json::object proc;
    proc["ph"] = "M";
    proc["name"] = "process_name";
    proc["pid"] = r;
    proc["args"] = {{"name", "stage " + std::to_string(r)}};
    events.push_back(std::move(proc));
    for (int s = 0; s < kStreamsPerDevice; ++s) {
      boost::json::object thread;
      thread["ph"] = "M";
      thread["name"] = "thread_name";
      thread["pid"] = r;
      thread["tid"] = s;
      thread["args"] = {{"name", to_string(static_cast<StreamKind>(s))}};
      events.push_back(std::move(thread));
    }
  }
  for (const TimelineEvent& e : report.timeline) {
    if (e.end_s <= e.start_s) continue;  // zero-length tasks clutter the view
    boost::json::object ev;
    ev["ph"] = "X";
    ev["name"] = e.name;
    ev["pid"] = e.stage;
    ev["tid"] = e.stream;
    ev["ts"] = e.start_s * 1e6;  // microseconds
    ev["dur"] = (e.end_s - e.start_s) * 1e6;
    events.push_back(std::move(ev));
  }
  boost::json::object doc;
  doc["traceEvents"] = std::move(events);
  doc["displayTimeUnit"] = "ms";
  boost::json::object meta;
  meta["iteration_time_s"] = report.iteration_time_s;
  meta["cost_model"] = report.cost_model;
  doc["otherData"] = std::move(meta);
  return boost::json::serialize(doc);
}

}  // namespace llmplan::simulator
