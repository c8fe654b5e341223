// `attnprof worker`: hidden. The process a supervised `attnprof run` runs its points in; it
// speaks the line protocol of src/run/protocol.hpp on stdin and stdout. Not for people.
#include <memory>

#include "attnprof/worker.hpp"
#include "cli.hpp"
#include "composition.hpp"
#include "number_options.hpp"

namespace attnprof::cli {

Command add_worker_command(CLI::App& app) {
  auto o = std::make_shared<WorkerOptions>();
  CLI::App* sub = app.add_subcommand("worker", "Serve points to a supervising `attnprof run`");
  sub->group("");  // hidden from --help
  sub->add_option("--device", o->device, "auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  add_whole_number_option(sub, "--threads", o->threads, "CPU threads (0: all)", 0);
  add_whole_number_option(sub, "--parent", o->parent_pid, "Exit unless this is the parent's pid",
                          0);
  return {sub, [o]() { return serve_worker(*o, registered_providers(), point_hooks()); }};
}

}  // namespace attnprof::cli
