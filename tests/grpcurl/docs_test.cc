// Every grpcurl command in README.md and docs/*.md, run exactly as written
// against the shared deployment (grpcurl_env.h), extracted from the Markdown
// at test time so that a doc example cannot rot.
//
// Extraction: in every fenced code block, each line whose first word is
// `grpcurl`, joined with the lines it continues onto (a trailing `\`) and,
// for a here-document (`<<'EOF'`), the lines up to its terminator. Commands
// run in the order of their file, each with `bash -o pipefail -c` in a
// directory holding the files the docs name, and must exit 0 without an
// error on stderr. A command answered UNAVAILABLE is retried for up to 30 s
// (what the docs tell a caller to do).
//
// The only substitutions (kSubstitutions below, the docs' placeholders):
//   127.0.0.1:7070, localhost:7070, 127.0.0.1:PORT -> the supervisor
//   127.0.0.1:7071, localhost:7071                -> worker 0
//   localhost:7070 in a command with -cacert      -> the mutual-TLS supervisor
//   kafka.kafka.svc.cluster.local:9092            -> the cluster's Kafka
//   TASK_ID, wiki_81cfef71673c5fde_eb77bc55       -> a task worker 0 runs
//
// A doc may show a refusal: a command whose line ends in the comment
// `# fails: <Code>` or `# fails: <Code>: <message part>` must exit non-zero
// with that code (as grpcurl prints it, e.g. PermissionDenied) and, if given,
// a message containing that part; nothing else may fail.
//
// The environment: $TOKEN is the path of an admin token; the directory holds
// ops.token (the admin token), reader.token (a reader's), spec.json (the
// README's spec with its bootstrap.servers 127.0.0.1:9092 pointed at the
// cluster's Kafka), ca.crt, operator.crt and operator.key (an admin's client
// certificate).
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/json_util.h"
#include "sluice/v1/task_service.pb.h"
#include "tests/grpcurl/grpcurl_env.h"
#include "tests/testing/subprocess.h"

namespace sluice::grpcurl {
namespace {

struct DocCommand {
  std::string file;
  int line = 0;  // 1-based, of the `grpcurl` line
  std::string text;
  // From a `# fails: <Code>[: <message part>]` comment; empty: must succeed.
  std::string expected_code;
  std::string expected_message;
};

// Fills expected_code/expected_message from the command's `# fails:` comment.
void ParseExpectedFailure(DocCommand* command) {
  static constexpr absl::string_view kMarker = "# fails:";
  for (absl::string_view line : absl::StrSplit(command->text, '\n')) {
    const size_t at = line.find(kMarker);
    if (at == absl::string_view::npos) continue;
    absl::string_view rest = absl::StripAsciiWhitespace(line.substr(at + kMarker.size()));
    const size_t colon = rest.find(':');
    command->expected_code = std::string(absl::StripAsciiWhitespace(rest.substr(0, colon)));
    if (colon != absl::string_view::npos) {
      command->expected_message = std::string(absl::StripAsciiWhitespace(rest.substr(colon + 1)));
    }
    return;
  }
}

// The grpcurl commands of one Markdown file, in order.
std::vector<DocCommand> ExtractCommands(const std::string& file, const std::string& markdown) {
  std::vector<DocCommand> commands;
  std::vector<std::string> lines = absl::StrSplit(markdown, '\n');
  bool in_fence = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const absl::string_view stripped = absl::StripLeadingAsciiWhitespace(lines[i]);
    if (absl::StartsWith(stripped, "```")) {
      in_fence = !in_fence;
      continue;
    }
    if (!in_fence || !absl::StartsWith(stripped, "grpcurl ")) continue;
    DocCommand command{file, static_cast<int>(i + 1), lines[i]};
    size_t j = i;
    while (absl::EndsWith(lines[j], "\\") && j + 1 < lines.size()) {
      absl::StrAppend(&command.text, "\n", lines[++j]);
    }
    // A here-document: <<'EOF', <<"EOF" or <<EOF (not the here-string <<<).
    const size_t heredoc = command.text.find("<<");
    if (heredoc != std::string::npos && command.text.compare(heredoc, 3, "<<<") != 0) {
      std::string word = command.text.substr(heredoc + 2);
      word = std::string(absl::StripAsciiWhitespace(word.substr(0, word.find_first_of(" \n"))));
      absl::StrReplaceAll({{"'", ""}, {"\"", ""}, {"-", ""}}, &word);
      while (j + 1 < lines.size()) {
        absl::StrAppend(&command.text, "\n", lines[++j]);
        if (absl::StripAsciiWhitespace(lines[j]) == word) break;
      }
    }
    ParseExpectedFailure(&command);
    commands.push_back(std::move(command));
    i = j;
  }
  return commands;
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path) << content;
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A task running on worker 0 (polls: a new datasource's tasks take a few
// seconds to be assigned).
std::string TaskOnWorker0(const std::string& datasource) {
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  std::vector<std::string> args = {"-plaintext"};
  for (const std::string& a : BearerArgs("reader")) args.push_back(a);
  args.insert(args.end(), {Cluster()->worker_address(0), "sluice.v1.TaskService/ListTasks"});
  while (absl::Now() < deadline) {
    Result r = Grpcurl(args);
    v1::ListTasksResponse tasks;
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = true;
    if (r.ok() && google::protobuf::util::JsonStringToMessage(r.out, &tasks, options).ok()) {
      for (const auto& t : tasks.tasks()) {
        if (t.datasource() == datasource && t.state() == v1::TASK_STATE_READING) return t.task_id();
      }
    }
    absl::SleepFor(absl::Milliseconds(500));
  }
  ADD_FAILURE() << "no running task of " << datasource << " on worker 0 after 60 s";
  return "TASK_ID";
}

class DocsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(Cluster(), nullptr);
    auto dir = testing::MakeTempDir("docs");
    ASSERT_TRUE(dir.ok()) << dir.status();
    cwd_ = *dir;
    const std::string admin = Cluster()->token_file("admin");
    WriteFile(cwd_ + "/ops.token", ReadFileOrEmpty(admin));
    WriteFile(cwd_ + "/reader.token", ReadFileOrEmpty(Cluster()->token_file("reader")));
    env_["TOKEN"] = admin;
    absl::StatusOr<std::string> spec = ReadmeSpec();
    ASSERT_TRUE(spec.ok()) << spec.status();
    WriteFile(cwd_ + "/spec.json",
              absl::StrReplaceAll(*spec, {{"127.0.0.1:9092", Cluster()->bootstrap_servers()}}));
    for (const char* f : {"ca.crt", "operator.crt", "operator.key"}) {
      ASSERT_EQ(symlink((CertDir() + "/" + f).c_str(), (cwd_ + "/" + f).c_str()), 0) << f;
    }
  }

  // The command with the placeholders replaced (see the file comment).
  std::string Substitute(const DocCommand& command, const std::string& datasource) {
    std::string text = command.text;
    const std::string supervisor = Cluster()->supervisor_address();
    if (absl::StrContains(text, "-cacert")) {
      absl::StrReplaceAll({{"localhost:7070", TlsSupervisorAddress()}}, &text);
    }
    absl::StrReplaceAll({{"127.0.0.1:7070", supervisor},
                         {"localhost:7070", supervisor},
                         {"127.0.0.1:PORT", supervisor},
                         {"127.0.0.1:7071", Cluster()->worker_address(0)},
                         {"localhost:7071", Cluster()->worker_address(0)},
                         {"kafka.kafka.svc.cluster.local:9092", Cluster()->bootstrap_servers()}},
                        &text);
    if (absl::StrContains(text, "TASK_ID") ||
        absl::StrContains(text, "wiki_81cfef71673c5fde_eb77bc55")) {
      const std::string task = TaskOnWorker0(datasource);
      absl::StrReplaceAll({{"TASK_ID", task}, {"wiki_81cfef71673c5fde_eb77bc55", task}}, &text);
    }
    return text;
  }

  // Runs every grpcurl command of `file`; returns how many ran.
  int RunFile(const std::string& file, const std::string& datasource) {
    absl::StatusOr<std::string> markdown = ReadRepoFile(file);
    EXPECT_TRUE(markdown.ok()) << markdown.status();
    if (!markdown.ok()) return 0;
    std::vector<DocCommand> commands = ExtractCommands(file, *markdown);
    for (const DocCommand& command : commands) {
      const std::string text = Substitute(command, datasource);
      const absl::Time start = absl::Now();
      Result r = Shell(text, cwd_, env_);
      // UNAVAILABLE means "retry this call" (README): e.g. a ResetOffsets
      // right after the submit, before the supervisor has met the topic.
      while (ErrorCode(r) == "Unavailable" && absl::Now() - start < absl::Seconds(30)) {
        absl::SleepFor(absl::Milliseconds(500));
        r = Shell(text, cwd_, env_);
      }
      std::cerr << "[docs] " << file << ":" << command.line << " exit " << r.exit_code << " in "
                << absl::Now() - start << "\n";
      if (!command.expected_code.empty()) {
        EXPECT_NE(r.exit_code, 0) << file << ":" << command.line << " should fail with "
                                  << command.expected_code << "\n" << r.Describe();
        EXPECT_EQ(ErrorCode(r), command.expected_code) << file << ":" << command.line << "\n"
                                                       << r.Describe();
        EXPECT_TRUE(absl::StrContains(ErrorMessage(r), command.expected_message))
            << file << ":" << command.line << ": message should contain \""
            << command.expected_message << "\"\n" << r.Describe();
        continue;
      }
      EXPECT_EQ(r.exit_code, 0) << file << ":" << command.line << " failed:\n"
                                << command.text << "\nran as:\n" << text << "\n" << r.Describe();
      // Nothing a doc shows ends in an error.
      EXPECT_FALSE(absl::StrContains(r.err, "ERROR:")) << file << ":" << command.line << "\n" << r.err;
    }
    return static_cast<int>(commands.size());
  }

  std::string cwd_;
  std::map<std::string, std::string> env_;
};

TEST(DocsExtractionTest, FindsContinuationsAndHereDocuments) {
  const std::string md =
      "text `grpcurl -plaintext x list` inline is not a command\n"
      "```sh\n"
      "kubectl port-forward svc/x 7070:7070 &\n"
      "grpcurl -plaintext a list   # a comment\n"
      "grpcurl -d '{}' \\\n"
      "  a b/C\n"
      "grpcurl -d @ a b/D <<'EOF'\n"
      "{\"x\": 1}\n"
      "EOF\n"
      "grpcurl -d @ a b/E <<< \"{}\"\n"
      "```\n"
      "grpcurl outside a fence\n";
  std::vector<DocCommand> c = ExtractCommands("x.md", md);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].text, "grpcurl -plaintext a list   # a comment");
  EXPECT_EQ(c[0].line, 4);
  EXPECT_EQ(c[1].text, "grpcurl -d '{}' \\\n  a b/C");
  EXPECT_EQ(c[2].text, "grpcurl -d @ a b/D <<'EOF'\n{\"x\": 1}\nEOF");
  EXPECT_EQ(c[3].text, "grpcurl -d @ a b/E <<< \"{}\"");
  for (const DocCommand& command : c) EXPECT_EQ(command.expected_code, "");
}

TEST(DocsExtractionTest, ReadsTheExpectedFailure) {
  const std::string md =
      "```sh\n"
      "grpcurl -d '{}' a b/C   # fails: PermissionDenied\n"
      "grpcurl -d '{}' \\\n"
      "  a b/D   # fails: NotFound: no supervisor for datasource\n"
      "```\n";
  std::vector<DocCommand> c = ExtractCommands("x.md", md);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].expected_code, "PermissionDenied");
  EXPECT_EQ(c[0].expected_message, "");
  EXPECT_EQ(c[1].expected_code, "NotFound");
  EXPECT_EQ(c[1].expected_message, "no supervisor for datasource");
}

TEST_F(DocsTest, Readme) { EXPECT_GE(RunFile("README.md", "wiki"), 9); }

TEST_F(DocsTest, Operations) { EXPECT_GE(RunFile("docs/operations.md", "wikipedia"), 19); }

// Every other docs/*.md file the test is given (BUILD: $(rootpaths)).
TEST_F(DocsTest, EveryOtherDoc) {
  int files = 0;
  for (int i = 1; i < ::testing::internal::GetArgvs().size(); ++i) {
    const std::string file = ::testing::internal::GetArgvs()[i];
    if (file == "README.md" || file == "docs/operations.md") continue;
    ++files;
    RunFile(file, "wiki");
  }
  EXPECT_GE(files, 4) << "the test is given docs/*.md as arguments";
}

}  // namespace
}  // namespace sluice::grpcurl
