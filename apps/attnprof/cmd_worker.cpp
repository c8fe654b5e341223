// `attnprof worker`: hidden. The process a supervised `attnprof run` runs its points in; it
// speaks the line protocol of src/run/protocol.hpp on stdin and stdout. Not for people.
#include <memory>

#include "attnprof/worker.hpp"
#include "cli.hpp"
#include "composition.hpp"

namespace attnprof::cli {

Command add_worker_command(CLI::App& app) {
  auto o = std::make_shared<WorkerOptions>();
  CLI::App* sub = app.add_subcommand("worker", "Serve points to a supervising `attnprof run`");
  sub->group("");  // hidden from --help
  sub->add_option("--device", o->device, "auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  sub->add_option("--threads", o->threads, "CPU threads (0: all)")->check(CLI::NonNegativeNumber);
  sub->add_option("--parent", o->parent_pid, "Exit unless this is the parent's pid");
  return {sub, [o]() { return serve_worker(*o, registered_providers(), point_hooks()); }};
}

}  // namespace attnprof::cli
