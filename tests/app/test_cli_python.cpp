// Python providers end to end through the CLI (issue 15): the catalog, the Python worker and its
// C ABI, verification and timing by the C++ instrument, faults of every kind, --py-provider, and
// the Python API. CPU only (numpy); the CUDA providers are measured on the H200 (bench/).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "app/python_cli.hpp"
#include "attnprof/journal.hpp"
#include "attnprof/result_json.hpp"
#include "cli_runner.hpp"

namespace attnprof {
namespace {

namespace fs = std::filesystem;
using testing_cli::Outcome;
using testing_cli::run_cli;
using testing_python::list_line;
using testing_python::provider_unavailable;
using testing_python::python_expected;
using testing_python::python_unavailable;

const std::string kFiles = ATTNPROF_TEST_PY_DIR;
const std::string kPoint =
    " --device cpu --heads 2 --kv-heads 1 --seq 48 --kv-seq 80 --head-dim 16 --dtype fp32 "
    "--min-time 1ms --point-timeout 50ms --min-samples 3 --no-trace --no-history ";

// The fixture of these tests: `run` appends kPoint.
class PythonCli : public testing_python::PythonCliTest {
 protected:
  std::map<std::string, Result> run(const std::string& args, Outcome* outcome = nullptr,
                                    const std::string& env = "") {
    return run_rows(args + kPoint, outcome, env);
  }
};

// One traits table (python/attnprof/provider.py TRAITS, issue 58): describe() writes exactly its
// keys, which are the keys the C++ codec writes (to_json(ProviderTraits)) with every optional trait
// set, in its order; a Python provider declaring every flag reaches the C++ traits through
// traits_from_json, as python_info.cpp reads them (and so the runner's variant_refusal).
TEST(PythonTraits, TheTableMatchesTheCodec) {
  if (std::system("python3 -c '' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  const fs::path script = fs::temp_directory_path() /
                          fmt::format("attnprof_traits_{}.py", static_cast<long>(::getpid()));
  {
    std::ofstream f(script);
    f << "import json, sys\n"
      << "sys.path.insert(0, '" << ATTNPROF_TEST_PY_PKG << "')\n"
      << "from attnprof.provider import TRAITS, Provider\n"
      << "from attnprof._loader import describe\n"
      << "class Every(Provider):\n"
      << "    name = 'py.test.every'; device = 'cpu'; family = 'naive'; fused = True\n"
      << "    library = 'numpy'; role = 'baseline'; variant_of = 'py.numpy.naive'\n"
      << "    backward = True; writes_lse = True; in_default_set = False\n"
      << "    paged_kv = fp8 = softcap = sinks = ragged = own_streams = True\n"
      << "    quantization = 'int8 Q K^T'; output_tolerance = 0.05\n"
      << "    prepare_allowance_s = 90.0\n"
      << "print(json.dumps({'keys': [name for name, _ in TRAITS],\n"
      << "                  'traits': describe(Every())['traits']}))\n";
  }
  FILE* p = ::popen(("python3 " + script.string()).c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  fs::remove(script);
  ASSERT_EQ(status, 0) << out;
  const nlohmann::json got = nlohmann::json::parse(out);

  ProviderTraits every;
  every.paged_kv = every.fp8 = every.softcap = every.sinks = every.ragged = every.own_streams =
      true;
  every.quantization = "q";
  every.output_tolerance = 0.05;
  every.prepare_allowance_s = 90;
  std::vector<std::string> cpp_keys;
  const nlohmann::ordered_json written = to_json(every);
  for (const auto& item : written.items()) cpp_keys.push_back(item.key());
  const auto python_keys = got.at("keys").get<std::vector<std::string>>();
  EXPECT_EQ(python_keys, cpp_keys) << "provider.py TRAITS and result_json.cpp traits_json differ";
  std::vector<std::string> described;
  for (const auto& item : got.at("traits").items()) described.push_back(item.key());
  std::sort(described.begin(), described.end());
  std::vector<std::string> sorted = python_keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(described, sorted) << "describe() does not follow the table";

  const ProviderTraits t = traits_from_json(got.at("traits"));
  EXPECT_EQ(t.name, "py.test.every");
  EXPECT_EQ(t.device, DeviceKind::cpu);
  EXPECT_EQ(t.role, Role::baseline);
  EXPECT_EQ(t.variant_of, "py.numpy.naive");
  EXPECT_TRUE(t.fused && t.backward && t.writes_lse);
  EXPECT_FALSE(t.in_default_set);
  EXPECT_TRUE(t.paged_kv);
  EXPECT_TRUE(t.fp8);
  EXPECT_TRUE(t.softcap);
  EXPECT_TRUE(t.sinks);
  EXPECT_TRUE(t.ragged);
  EXPECT_TRUE(t.own_streams);
  EXPECT_EQ(t.quantization, "int8 Q K^T");
  EXPECT_DOUBLE_EQ(t.output_tolerance, 0.05);
  EXPECT_DOUBLE_EQ(t.prepare_allowance_s, 90);
}

TEST_F(PythonCli, ListShowsPythonProvidersWithTheirTraitsOrWhy) {
  const Outcome o = run_cli("list");
  EXPECT_EQ(o.code, 0) << o.err;
  // Where the Python providers are expected, they are listed and py.numpy.naive is available;
  // elsewhere one line says why there are none.
  const bool listed = o.out.find("py.numpy.naive") != std::string::npos;
  const bool said = o.out.find("py.*") != std::string::npos;
  if (python_expected()) {
    EXPECT_TRUE(listed) << o.out;
    EXPECT_EQ(provider_unavailable("py.numpy.naive"), "");
  } else {
    EXPECT_TRUE(listed || said) << o.out;
  }
  if (listed) {
    // CUDA ones on this machine: available where torch is, else the reason names the module.
    EXPECT_NE(o.out.find("py.torch.compile.naive"), std::string::npos) << o.out;
  }
}

TEST_F(PythonCli, NumpyProviderIsVerifiedAndTimedByTheInstrument) {
  REQUIRE_PYTHON();
  for (const char* mask : {"none", "causal", "causal-br", "window:9"}) {
    auto rows = run(fmt::format("--providers py.numpy.naive,cpu.naive --mask {}", mask));
    ASSERT_TRUE(rows.count("py.numpy.naive")) << mask;
    const Result& r = rows["py.numpy.naive"];
    EXPECT_EQ(r.status, Status::passed) << mask << ": " << r.reason;
    EXPECT_EQ(r.verify.rows_checked, r.verify.rows_total) << mask;
    EXPECT_LT(r.verify.rel_l2_err, 1e-5) << mask;
    EXPECT_GT(r.timing.samples, 0) << mask;
    EXPECT_TRUE(r.prepare_s.has_value()) << mask;
    EXPECT_EQ(r.traits.library, "numpy");
    EXPECT_NE(r.env.find("python"), r.env.end());
    // Same inputs as the C++ provider: both pass against the same fp64 reference.
    EXPECT_EQ(rows["cpu.naive"].status, Status::passed) << mask;
  }
}

// A Python provider that declares the softcap gets capped points and passes the fp64 check with the
// cap applied (a cap of 2 bends the scores at D 16); likewise the sink logits, through the ABI's
// tenth tensor (with and without a softcap, and windows whose early rows see few keys); a provider
// without sinks is refused them in words.
TEST_F(PythonCli, ASoftcapAndSinksReachPython) {
  REQUIRE_PYTHON();
  for (const char* mask : {"none", "causal-br"}) {
    auto rows =
        run(fmt::format("--providers py.numpy.naive,cpu.naive --mask {} --softcap 2", mask));
    ASSERT_TRUE(rows.count("py.numpy.naive")) << mask;
    const Result& r = rows["py.numpy.naive"];
    EXPECT_EQ(r.status, Status::passed) << mask << ": " << r.reason << " " << r.verify.detail;
    EXPECT_EQ(r.spec.softcap, 2.0);
    EXPECT_TRUE(r.traits.softcap);
    EXPECT_LT(r.verify.rel_l2_err, 1e-5) << mask;
    EXPECT_EQ(rows["cpu.naive"].status, Status::not_supported);
  }
  for (const char* args : {"--mask none --sinks on", "--mask window:3 --sinks on",
                           "--mask causal --sinks on --softcap 2"}) {
    auto rows = run(fmt::format("--providers py.numpy.naive,cpu.naive {}", args));
    const Result& r = rows["py.numpy.naive"];
    EXPECT_EQ(r.status, Status::passed) << args << ": " << r.reason << " " << r.verify.detail;
    EXPECT_TRUE(r.spec.sinks) << args;
    EXPECT_TRUE(r.traits.sinks) << args;
    EXPECT_LT(r.verify.rel_l2_err, 1e-5) << args;
    EXPECT_EQ(rows["cpu.naive"].status, Status::not_supported) << args;
    EXPECT_EQ(rows["cpu.naive"].reason.rfind("cpu.naive has no ", 0), 0u) << args;
  }
}

// A paged cache and a ragged batch reach Python (ABI 3: page size, block table, seq_q, seq_kv):
// py.numpy.naive reads K and V through the block table and each sequence at its own lengths, and
// every row it owes passes. The harness shuffles the pages and fills K and V with kPageTailValue
// past each sequence's keys (75 keys leave 5 poisoned rows on the last page of 16), so reading the
// pages in memory order, or attending past seq_kv[b], fails verification: tests/python_providers/
// paged.py's two providers do each and must end incorrect.
TEST_F(PythonCli, APagedCacheAndARaggedBatchReachPython) {
  REQUIRE_PYTHON();
  const std::string point =
      " --device cpu --batch 3 --heads 4 --kv-heads 2 --seq 24 --kv-seq 75 --head-dim 16 "
      "--dtype fp32 --min-time 1ms --point-timeout 50ms --min-samples 3 --no-trace --no-history "
      "--py-provider " +
      kFiles + "/paged.py ";
  struct Case {
    const char* args;
    const char* wrong;  // the provider of paged.py that must fail here
  };
  for (const Case& c : {
           Case{"--page-size 16 --mask causal", "py.test.pages_in_order"},
           Case{"--page-size 16 --layout bshd --mask none", "py.test.pages_in_order"},
           Case{"--page-size 16 --layout bshd --mask window:9 --sinks on", nullptr},
           Case{"--seqlens 75/30/7 --mask causal-br", "py.test.ignores_lengths"},
           Case{"--seqlens 75/30/7 --mask none --layout bshd", "py.test.ignores_lengths"},
           Case{"--seqlens 9/75/40 --page-size 16 --mask causal --softcap 2", nullptr},
       }) {
    const std::string providers =
        c.wrong ? fmt::format("py.numpy.naive,{}", c.wrong) : std::string("py.numpy.naive");
    auto rows = run_rows(fmt::format("--providers {} {}{}", providers, c.args, point));
    ASSERT_TRUE(rows.count("py.numpy.naive")) << c.args;
    const Result& r = rows["py.numpy.naive"];
    EXPECT_EQ(r.status, Status::passed) << c.args << ": " << r.reason << " " << r.verify.detail;
    EXPECT_GT(r.verify.rows_total, 0) << c.args;
    EXPECT_EQ(r.verify.rows_checked, r.verify.rows_total) << c.args;
    EXPECT_LT(r.verify.rel_l2_err, 1e-5) << c.args;
    EXPECT_TRUE(r.traits.paged_kv);
    EXPECT_TRUE(r.traits.ragged);
    if (c.wrong == nullptr) continue;
    ASSERT_TRUE(rows.count(c.wrong)) << c.args;
    EXPECT_EQ(rows[c.wrong].status, Status::incorrect)
        << c.wrong << " " << c.args << ": " << rows[c.wrong].reason;
  }
  // Without the trait the runner refuses such points to a Python provider, in words.
  auto rows = run_rows("--providers py.test.ignores_lengths --page-size 16" + point);
  EXPECT_EQ(rows["py.test.ignores_lengths"].status, Status::not_supported);
  EXPECT_NE(rows["py.test.ignores_lengths"].reason.find("no paged KV cache"), std::string::npos)
      << rows["py.test.ignores_lengths"].reason;
}

// A Python provider declares its settings too: --set checks them, sweeps the values, and each
// point's value reaches its prepare() in the Python worker (the note says it) and its row's env.
TEST_F(PythonCli, APythonProviderDeclaresSettingsThatSweep) {
  REQUIRE_PYTHON();
  const fs::path out = dir_ / "rows.jsonl";
  const std::string file = " --py-provider " + kFiles + "/settings.py --providers py.test.tagged";
  const Outcome o =
      run_cli("run" + file + " --set py.test.tagged.tag=a,b" + kPoint + " --out " + out.string());
  ASSERT_EQ(o.code, 0) << o.err;
  const std::vector<Result> rows = read_journal(out).rows;
  ASSERT_EQ(rows.size(), 2u) << o.out;
  for (const Result& r : rows) {
    EXPECT_EQ(r.status, Status::passed) << r.reason;
    const std::string tag = r.env.at("setting.tag");
    EXPECT_EQ(r.provider_note, "tag " + tag);
  }
  EXPECT_NE(rows[0].env.at("setting.tag"), rows[1].env.at("setting.tag"));
  const Outcome bad = run_cli("run" + file + " --set py.test.tagged.tag=c" + kPoint);
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("py.test.tagged.tag takes one of a, b"), std::string::npos) << bad.err;
}

// A provider whose prepare compiles for long (FlashInfer's JIT) declares prepare_allowance_s: the
// supervisor waits that much beyond --hang-timeout for its points. The same 3 s prepare without
// the allowance is a hung worker at a 1 s limit, and says the limit.
TEST_F(PythonCli, APrepareAllowanceOutlastsTheHangLimit) {
  REQUIRE_PYTHON();
  const std::string file = " --py-provider " + kFiles + "/slow_prepare.py --hang-timeout 1s";
  auto rows = run("--providers py.test.slow_prepare" + file);
  EXPECT_EQ(rows["py.test.slow_prepare"].status, Status::passed)
      << rows["py.test.slow_prepare"].reason;
  EXPECT_GE(rows["py.test.slow_prepare"].prepare_s.value_or(0), 3.0);
  rows = run("--providers py.test.slow_prepare_undeclared" + file);
  const Result& hung = rows["py.test.slow_prepare_undeclared"];
  EXPECT_EQ(hung.status, Status::timeout) << hung.reason;
  EXPECT_NE(hung.reason.find("no answer within the hang limit (1 s, --hang-timeout)"),
            std::string::npos)
      << hung.reason;
}

// ONNX Runtime's three graph forms on the CPU EP, every mask, GQA where the form takes it: the
// same inputs as the C++ providers, verified against fp64, O written through IOBinding.
TEST_F(PythonCli, OnnxRuntimeGraphFormsPassOnTheCpu) {
  REQUIRE_PYTHON();
  // Probed through `list --json`, not the table's spacing (a wider name column once hid this
  // test behind a skip). A skip is for a machine without the libraries; where python3 imports
  // them, the providers must be available.
  if (const std::string why = provider_unavailable("ort.cpu.attention"); !why.empty()) {
    if (std::system("python3 -c 'import onnxruntime, onnx' >/dev/null 2>&1") == 0)
      FAIL() << "onnxruntime and onnx import, yet: " << why;
    GTEST_SKIP() << "onnxruntime or onnx not importable (scripts/install-deps.sh installs them)";
  }
  for (const char* mask : {"none", "causal", "causal-br", "window:9"}) {
    auto rows = run(fmt::format(
        "--providers ort.cpu.naive_graph,ort.cpu.attention,ort.cpu.mha,ort.cpu.gqa --mask {}",
        mask));
    for (const char* p : {"ort.cpu.naive_graph", "ort.cpu.attention"}) {
      ASSERT_TRUE(rows.count(p)) << p;
      EXPECT_EQ(rows[p].status, Status::passed) << p << " " << mask << ": " << rows[p].reason;
      EXPECT_LT(rows[p].verify.rel_l2_err, 1e-5) << p << " " << mask;
      EXPECT_EQ(rows[p].traits.library, "ONNX Runtime");
    }
    // kPoint has grouped K/V heads, which MultiHeadAttention does not take: refused, with why.
    EXPECT_EQ(rows["ort.cpu.mha"].status, Status::not_supported);
    EXPECT_NE(rows["ort.cpu.mha"].reason.find("no grouped K/V heads"), std::string::npos);
    // GroupQueryAttention is causal from the bottom right (the keys before the queries are its
    // past cache): it runs causal-br and windows, and refuses the rest with why.
    const std::string m = mask;
    const bool gqa_runs = m == "causal-br" || m.rfind("window", 0) == 0;
    EXPECT_EQ(rows["ort.cpu.gqa"].status, gqa_runs ? Status::passed : Status::not_supported)
        << mask << ": " << rows["ort.cpu.gqa"].reason;
  }
  // Equal head counts: MultiHeadAttention's shapes.
  const fs::path out = dir_ / "mha.jsonl";
  const Outcome o = run_cli(
      "run --providers ort.cpu.mha --device cpu --heads 2 --seq 48 --kv-seq 80 --head-dim 16 "
      "--dtype fp32 --mask causal --min-time 1ms --min-samples 3 --no-trace --no-history --out " +
      out.string());
  ASSERT_TRUE(fs::exists(out)) << o.err;
  const std::vector<Result> mha = read_journal(out).rows;
  ASSERT_EQ(mha.size(), 1u);
  EXPECT_EQ(mha[0].status, Status::passed) << mha[0].reason;
  // What ORT holds in its own arena counts: the exported graph keeps at least one 4 x 1024 x 1024
  // fp32 score matrix (16 MiB) there.
  const fs::path big = dir_ / "naive.jsonl";
  const Outcome n = run_cli(
      "run --providers ort.cpu.naive_graph --device cpu --heads 4 --seq 1024 --head-dim 64 "
      "--dtype fp32 --min-time 1ms --min-samples 3 --no-trace --no-history --out " +
      big.string());
  ASSERT_TRUE(fs::exists(big)) << n.err;
  const std::vector<Result> naive = read_journal(big).rows;
  ASSERT_EQ(naive.size(), 1u);
  EXPECT_EQ(naive[0].status, Status::passed) << naive[0].reason;
  EXPECT_GE(naive[0].memory.peak_bytes - naive[0].memory.analytic_bytes, int64_t{16} << 20);
  EXPECT_NE(naive[0].provider_note.find("resident memory"), std::string::npos)
      << naive[0].provider_note;
}

TEST_F(PythonCli, EveryFaultEndsItsOwnPointOnly) {
  REQUIRE_PYTHON();
  Outcome o;
  auto rows = run("--py-provider " + kFiles +
                      "/faults.py --providers test.py.raise,test.py.segv,test.py.hang,"
                      "test.py.refuse,py.numpy.naive --hang-timeout 8s",
                  &o);
  ASSERT_EQ(rows.size(), 5u) << o.err;
  EXPECT_EQ(rows["test.py.raise"].status, Status::failed);
  EXPECT_EQ(rows["test.py.raise"].fault, Fault::provider);
  EXPECT_NE(rows["test.py.raise"].reason.find("RuntimeError: the user's kernel is broken"),
            std::string::npos)
      << rows["test.py.raise"].reason;
  EXPECT_EQ(rows["test.py.segv"].status, Status::failed);
  EXPECT_EQ(rows["test.py.segv"].fault, Fault::crash) << rows["test.py.segv"].reason;
  EXPECT_EQ(rows["test.py.hang"].status, Status::timeout);
  EXPECT_EQ(rows["test.py.refuse"].status, Status::not_supported);
  EXPECT_NE(rows["test.py.refuse"].reason.find("the library refused this shape"),
            std::string::npos);
  // The worker was replaced after the crash and the hang: the last point still passes.
  EXPECT_EQ(rows["py.numpy.naive"].status, Status::passed) << rows["py.numpy.naive"].reason;
}

TEST_F(PythonCli, UserFunctionFilesRunByName) {
  REQUIRE_PYTHON();
  const std::string file = kFiles + "/user_function.py";
  auto rows = run("--py-provider " + file + ":attention --py-provider " + file +
                  ":wrong --providers py.user.softmax,py.user.wrong --mask causal");
  EXPECT_EQ(rows["py.user.softmax"].status, Status::passed) << rows["py.user.softmax"].reason;
  // A function without a spec cannot honour the mask: refused with the reason, not wrong.
  EXPECT_EQ(rows["py.user.wrong"].status, Status::not_supported);
  EXPECT_NE(rows["py.user.wrong"].reason.find("takes no spec"), std::string::npos);
  rows = run("--py-provider " + file + ":wrong --providers py.user.wrong");
  EXPECT_EQ(rows["py.user.wrong"].status, Status::incorrect) << rows["py.user.wrong"].reason;
}

// --py-provider without --providers adds the file's providers to the default set: the user's
// function runs beside the CPU defaults (not instead of them, and not left out), the built-in
// Python providers among them (issue 59: the default set is every eligible provider that can run
// a point).
TEST_F(PythonCli, APyProviderFileAddsItsProvidersToTheDefaultSet) {
  REQUIRE_PYTHON();
  auto rows = run("--py-provider " + kFiles + "/user_function.py:attention");
  EXPECT_EQ(rows["py.user.softmax"].status, Status::passed) << rows["py.user.softmax"].reason;
  EXPECT_EQ(rows["cpu.flash"].status, Status::passed);
  EXPECT_EQ(rows["py.numpy.naive"].status, Status::passed) << rows["py.numpy.naive"].reason;
}

// A quantized provider is judged against the bound it declares, said in its row; none above 10%.
TEST_F(PythonCli, AQuantizedProviderIsJudgedAgainstItsDeclaredBound) {
  REQUIRE_PYTHON();
  const std::string file = kFiles + "/user_function.py";
  auto rows = run("--py-provider " + file + ":quantized --py-provider " + file +
                  ":overclaimed --providers py.user.quantized,py.user.overclaimed");
  const Result& q = rows["py.user.quantized"];
  EXPECT_EQ(q.status, Status::passed) << q.reason;
  EXPECT_DOUBLE_EQ(q.verify.tolerance, 0.05);
  EXPECT_NEAR(q.verify.rel_l2_err, 0.01, 1e-4);
  EXPECT_NE(q.verify.detail.find("declared by the provider (test: every element off by 1%)"),
            std::string::npos)
      << q.verify.detail;
  EXPECT_EQ(q.traits.quantization, "test: every element off by 1%");
  EXPECT_DOUBLE_EQ(q.traits.output_tolerance, 0.05);
  const Result& o = rows["py.user.overclaimed"];
  EXPECT_EQ(o.status, Status::incorrect) << o.reason;
  EXPECT_DOUBLE_EQ(o.verify.tolerance, 0.1);
}

TEST_F(PythonCli, ABrokenProviderFileIsAOneLineError) {
  REQUIRE_PYTHON();
  const Outcome o =
      run_cli("run --py-provider " + kFiles + "/broken.py --providers py.numpy.naive" + kPoint);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_EQ(o.err.rfind("attnprof: error: ", 0), 0u) << o.err;
  EXPECT_NE(o.err.find("broken.py: cannot load: SyntaxError"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << o.err;
  const Outcome missing = run_cli("list --py-provider " + kFiles + "/faults.py:Nothing");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("has no 'Nothing'"), std::string::npos) << missing.err;
}

TEST_F(PythonCli, PythonApiRunsAndProfilesAFunction) {
  REQUIRE_PYTHON();
  const fs::path script = dir_ / "api.py";
  std::ofstream(script) << "import attnprof, sys\n"
                           "sys.path.insert(0, '"
                        << kFiles
                        << "')\n"
                           "import user_function\n"
                           "rows = attnprof.run(providers='py.numpy.naive', device='cpu', "
                           "heads=2, seq=[32, 64], head_dim=16, dtype='fp32', min_time='1ms')\n"
                           "print(len(rows), sorted({r['status'] for r in rows}))\n"
                           "rows = attnprof.profile(user_function.attention, compare='cpu.naive', "
                           "device='cpu', heads=2, seq=32, head_dim=16, dtype='fp32', "
                           "mask='causal', min_time='1ms')\n"
                           "print(sorted((r['provider'], r['status']) for r in rows))\n";
  // The first python3 with numpy (the one attnprof picks too when none has torch).
  const std::string cmd = fmt::format(
      "for p in $(which -a python3); do $p -c 'import numpy' 2>/dev/null && "
      "ATTNPROF_BIN={} PYTHONPATH={} exec $p {} 2>&1; done; echo no python3 with numpy; exit 3",
      ATTNPROF_TEST_BINARY, ATTNPROF_TEST_PY_PKG, script.string());
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0) << out;
  EXPECT_NE(out.find("2 ['passed']"), std::string::npos) << out;
  EXPECT_NE(out.find("[('cpu.naive', 'passed'), ('py.user.softmax', 'passed')]"), std::string::npos)
      << out;
}

// The cheats (tests/python_providers/cheats.py): each ends with the status and fault that say
// what it did, at a small shape and (the cheap ones) at one where the attention is 1000x the work
// of copying its output; the honest one passes at both.
TEST_F(PythonCli, EveryCheatEndsWithTheFaultThatNamesIt) {
  REQUIRE_PYTHON();
  const std::string file = " --py-provider " + kFiles + "/cheats.py";
  Outcome o;
  auto rows = run(file +
                      " --providers test.cheat.honest,test.cheat.lazy,test.cheat.memoize,"
                      "test.cheat.zero_q,test.cheat.toggle_q,test.cheat.past_end,test.cheat.nan,"
                      "test.cheat.wrong_shape,test.cheat.exits,test.cheat.sleeps --hang-timeout 8s "
                      "--no-auto-peaks",
                  &o, "XDG_CACHE_HOME=" + (dir_ / "no-ceilings").string());
  ASSERT_EQ(rows.size(), 10u) << o.err;
  const auto expect = [](const Result& r, Status status, Fault fault, const std::string& says) {
    EXPECT_EQ(r.status, status) << r.provider << ": " << r.reason;
    EXPECT_EQ(r.fault, fault) << r.provider << ": " << to_string(r.fault) << ": " << r.reason;
    EXPECT_NE(r.reason.find(says), std::string::npos) << r.provider << ": " << r.reason;
    if (status != Status::passed) {
      EXPECT_EQ(r.tflops, 0) << r.provider;
    }
  };
  expect(rows["test.cheat.honest"], Status::passed, Fault::none, "");
  expect(rows["test.cheat.lazy"], Status::incorrect, Fault::unwritten, "timed sample 1");
  // No CPU ceilings here (an empty cache, --no-auto-peaks), so no speed is implausible: the memo
  // is caught by its outputs not following new inputs. With ceilings, at the large point below,
  // its speed gives it away first.
  expect(rows["test.cheat.memoize"], Status::incorrect, Fault::stale, "");
  expect(rows["test.cheat.zero_q"], Status::failed, Fault::modified_inputs, "input q");
  expect(rows["test.cheat.toggle_q"], Status::failed, Fault::modified_inputs, "input q");
  expect(rows["test.cheat.past_end"], Status::failed, Fault::out_of_bounds, "past the end of o");
  expect(rows["test.cheat.nan"], Status::incorrect, Fault::none, "1 non-finite");
  expect(rows["test.cheat.wrong_shape"], Status::failed, Fault::provider, "");
  expect(rows["test.cheat.exits"], Status::failed, Fault::crash, "exited with status 3");
  expect(rows["test.cheat.sleeps"], Status::timeout, Fault::timeout, "hang limit");

  // B1 H4 N1024 D64: a memo answers 0.5 GFLOP with a 1 MiB copy, faster than this CPU computes.
  const fs::path out = dir_ / "large.jsonl";
  const Outcome big =
      run_cli("run" + file +
              " --providers test.cheat.honest,test.cheat.lazy,test.cheat.memoize,test.cheat.zero_q,"
              "test.cheat.past_end --device cpu --heads 4 --seq 1024 --head-dim 64 --dtype fp32 "
              "--min-time 1ms --point-timeout 2s --min-samples 3 --no-trace --no-history --out " +
              out.string());
  ASSERT_TRUE(fs::exists(out)) << big.err;
  std::map<std::string, Result> large;
  for (Result& r : read_journal(out).rows) large[r.provider] = r;
  expect(large["test.cheat.honest"], Status::passed, Fault::none, "");
  expect(large["test.cheat.lazy"], Status::incorrect, Fault::unwritten, "timed sample 1");
  expect(large["test.cheat.memoize"], Status::incorrect, Fault::implausible,
         "more than this device can compute");
  expect(large["test.cheat.zero_q"], Status::failed, Fault::modified_inputs, "input q");
  expect(large["test.cheat.past_end"], Status::failed, Fault::out_of_bounds, "past the end of o");
}

}  // namespace
}  // namespace attnprof
