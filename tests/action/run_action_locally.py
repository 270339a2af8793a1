#!/usr/bin/env python3
"""Runs the composite action in action.yml the way a GitHub runner would on a
pull_request event, on a real git repository (a base branch pushed to a bare
"origin", a pull request commit on top), and checks what a reviewer gets: the
annotations, the job summary, the SARIF file (against the SARIF 2.1.0 schema)
and the action's outputs.

The `run:` steps run with bash as GitHub runs them (`bash --noprofile --norc
-eo pipefail`), with the `${{ inputs.* }}`, `${{ github.* }}` and
`${{ steps.*.outputs.* }}` expressions the action uses expanded, and the
GITHUB_* variables a pull_request event sets. `uses:` steps (upload-sarif)
cannot run here: the test checks what they would be given.

    run_action_locally.py --kvlint build/kvlint --schema sarif-schema-2.1.0.json
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[2]
ARGS = None  # set in main(): --kvlint, --schema

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
IMPORTS = "from torch import nn\nfrom transformers import DynamicCache\n\n\n"


def cache_class(name):
    return (f"class {name}(nn.Module):\n    def forward(self, x):\n"
            f"        self.{name}_cache = DynamicCache()\n        return x\n")


def git(cwd, *args):
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", "-c", "user.name=kvlint test", "-c", "user.email=kvlint@example.invalid",
                           *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


class StepRun:
    def __init__(self, step, proc):
        self.step, self.proc = step, proc
        self.name = step.get("name", step.get("id", "?"))


class LocalRunner:
    """The parts of the GitHub runner a composite action of `run:` steps needs."""

    def __init__(self, action_file, workspace, temp, inputs, github_env):
        self.action = yaml.safe_load(action_file.read_text())
        self.action_path = action_file.parent
        self.workspace, self.temp = workspace, temp
        declared = self.action.get("inputs", {})
        unknown = set(inputs) - set(declared)
        if unknown:
            raise AssertionError(f"inputs not declared in action.yml: {sorted(unknown)}")
        self.inputs = {name: str(spec.get("default", "")) for name, spec in declared.items()}
        self.inputs.update(inputs)
        self.env = github_env
        self.step_outputs = {}

    def expand(self, text):
        def value(match):
            expr = match.group(1)
            parts = expr.split(".")
            if parts[0] == "inputs" and len(parts) == 2 and parts[1] in self.inputs:
                return self.inputs[parts[1]]
            if parts[0] == "github" and len(parts) == 2:
                if parts[1] == "action_path":
                    return str(self.action_path)
                key = "GITHUB_" + parts[1].upper()
                if key in self.env:
                    return self.env[key]
            if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
                return self.step_outputs.get(parts[1], {}).get(parts[3], "")
            raise AssertionError(f"expression the local runner does not know: ${{{{ {expr} }}}}")
        return EXPRESSION.sub(value, str(text))

    @staticmethod
    def read_outputs(path):
        outputs, lines = {}, Path(path).read_text().splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
                name, delimiter = line.split("<<", 1)
                body = []
                i += 1
                while lines[i] != delimiter:
                    body.append(lines[i])
                    i += 1
                outputs[name] = "\n".join(body)
            elif "=" in line:
                name, value = line.split("=", 1)
                outputs[name] = value
            i += 1
        return outputs

    def run(self):
        """Runs the steps in order until one fails; returns (step runs, uses steps, action outputs)."""
        assert self.action["runs"]["using"] == "composite"
        runs, uses = [], []
        for index, step in enumerate(self.action["runs"]["steps"]):
            if "uses" in step:
                uses.append({"uses": step["uses"], "if": step.get("if", ""),
                             "with": {k: self.expand(v) for k, v in step.get("with", {}).items()}})
                continue
            if "if" in step:
                raise AssertionError(f"step {step.get('name')}: `if:` on a run step is not supported here")
            assert step.get("shell") == "bash", f"step {step.get('name')}: shell must be bash"
            output_file = self.temp / f"output-{index}"
            output_file.write_text("")
            env = dict(self.env, GITHUB_OUTPUT=str(output_file), GITHUB_ACTION_PATH=str(self.action_path))
            env.update({k: self.expand(v) for k, v in step.get("env", {}).items()})
            script = self.temp / f"step-{index}.sh"
            script.write_text(self.expand(step["run"]))
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                                  cwd=self.workspace, env=env, capture_output=True, text=True, timeout=120)
            if "id" in step:
                self.step_outputs[step["id"]] = self.read_outputs(output_file)
            runs.append(StepRun(step, proc))
            if proc.returncode != 0:
                break
        outputs = {name: self.expand(spec["value"]) for name, spec in self.action.get("outputs", {}).items()}
        return runs, uses, outputs


class PullRequestRun:
    """A repository with `main` on a bare origin and a pull request branch, run through the action."""

    def __init__(self, temp, base_files, pr_files):
        self.temp = temp
        origin, work = temp / "origin.git", temp / "work"
        git(temp, "init", "-q", "--bare", "-b", "main", str(origin))
        git(temp, "init", "-q", "-b", "main", str(work))
        self.write(work, base_files)
        git(work, "add", "-A")
        git(work, "commit", "-q", "-m", "base")
        git(work, "remote", "add", "origin", str(origin))
        git(work, "push", "-q", "origin", "main")
        self.base_sha = git(work, "rev-parse", "HEAD")
        git(work, "checkout", "-q", "-b", "feature")
        self.write(work, pr_files)
        git(work, "add", "-A")
        git(work, "commit", "-q", "-m", "pull request")
        self.head_sha = git(work, "rev-parse", "HEAD")
        # As after actions/checkout of the pull request: the base branch is not fetched.
        git(work, "update-ref", "-d", "refs/remotes/origin/main")
        self.work = work

    @staticmethod
    def write(root, files):
        for name, content in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(content)

    def run(self, **inputs):
        event = {
            "action": "synchronize", "number": 7,
            "pull_request": {
                "number": 7, "state": "open",
                "base": {"ref": "main", "sha": self.base_sha, "repo": {"full_name": "example/models"}},
                "head": {"ref": "feature", "sha": self.head_sha, "repo": {"full_name": "example/models"}},
            },
            "repository": {"full_name": "example/models", "default_branch": "main"},
        }
        event_path, summary, runner_temp = self.temp / "event.json", self.temp / "step_summary.md", self.temp / "runner"
        event_path.write_text(json.dumps(event))
        summary.write_text("")
        runner_temp.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
        env.update({
            "CI": "true", "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "feature", "GITHUB_REF": "refs/pull/7/merge",
            "GITHUB_SHA": self.head_sha, "GITHUB_REPOSITORY": "example/models",
            "GITHUB_WORKSPACE": str(self.work), "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_ENV": str(self.temp / "github_env"), "RUNNER_TEMP": str(runner_temp),
            "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
        })
        inputs.setdefault("kvlint-binary", str(Path(ARGS.kvlint).resolve()))
        runner = LocalRunner(ROOT / "action.yml", self.work, self.temp, inputs, env)
        self.steps, self.uses, self.outputs = runner.run()
        self.summary = summary.read_text()
        return self

    def step(self, step_id):
        return next(s for s in self.steps if s.step.get("id") == step_id)


class ActionOnAPullRequest(unittest.TestCase):
    def test_declared_inputs_and_outputs_are_documented(self):
        action = yaml.safe_load((ROOT / "action.yml").read_text())
        for kind in ("inputs", "outputs"):
            for name, spec in action[kind].items():
                self.assertTrue(spec.get("description"), f"{kind}.{name} has no description")
        self.assertLessEqual({"paths", "fail-on", "baseline", "sarif-file"}, set(action["inputs"]))

    def test_reports_the_pull_requests_finding_only_and_fails(self):
        with tempfile.TemporaryDirectory() as d:
            base = IMPORTS + cache_class("OldDecoder")
            pr = PullRequestRun(Path(d), {"model.py": base, "README.md": "models\n"},
                                {"model.py": base + "\n\n" + cache_class("NewDecoder")}).run()
            ran = [(s.name, s.proc.returncode, s.proc.stdout, s.proc.stderr) for s in pr.steps]
            self.assertEqual(pr.steps[-1].step.get("name"), "Fail on findings", ran)
            for s in pr.steps[:-1]:
                self.assertEqual(s.proc.returncode, 0, f"{s.name}: {s.proc.stderr}")

            # Annotations: the new cache (model.py line 13) and not the old one (line 7).
            check = pr.step("check")
            annotations = [line for line in check.proc.stdout.splitlines() if line.startswith("::")]
            self.assertEqual(len(annotations), 1, check.proc.stdout + check.proc.stderr)
            self.assertRegex(annotations[0], r"^::error file=model\.py,line=13,col=\d+.*,title=KV101 \(undeclared-cache\)::\[NewDecoder\]")
            self.assertEqual(pr.outputs["findings"], "1")
            self.assertEqual(pr.outputs["exit-code"], "1")
            # The action fetched the base branch the checkout left out.
            git(pr.work, "rev-parse", "--verify", "refs/remotes/origin/main")

            # The job summary: the Markdown report of the same selection, and what it covers.
            self.assertIn("## kvlint: 1 finding", pr.summary)
            self.assertIn("NewDecoder", pr.summary)
            self.assertNotIn("OldDecoder", pr.summary)
            self.assertIn("merge base with `origin/main`", pr.summary)

            # SARIF: the whole tree, valid SARIF 2.1.0, fingerprints for code scanning.
            self.assertEqual(pr.outputs["sarif-file"], "kvlint.sarif")
            sarif = json.loads((pr.work / "kvlint.sarif").read_text())
            schema = json.loads(Path(ARGS.schema).read_text())
            jsonschema.validators.validator_for(schema)(schema).validate(sarif)
            results = sarif["runs"][0]["results"]
            self.assertEqual(sorted(r["ruleId"] for r in results), ["KV101", "KV101"])
            self.assertTrue(all(r["partialFingerprints"]["kvlintFingerprint/v1"] for r in results))
            self.assertEqual(pr.uses, [{"uses": "github/codeql-action/upload-sarif@v3",
                                        "if": "${{ always() && inputs.upload-sarif == 'true' }}",
                                        "with": {"sarif_file": "kvlint.sarif", "category": "kvlint"}}])

            # The last step fails the job with kvlint's status.
            last = pr.steps[-1]
            self.assertEqual(last.proc.returncode, 1)
            self.assertIn("::error title=kvlint::1 finding(s)", last.proc.stdout)

    def test_fail_on_lets_warnings_pass_and_the_baseline_hides_known_findings(self):
        # Two warnings (a suppression without a reason that suppresses nothing) below fail-on=error.
        with tempfile.TemporaryDirectory() as d:
            base = IMPORTS + cache_class("OldDecoder")
            pr = PullRequestRun(Path(d), {"model.py": base},
                                {"other.py": "x = compute()  # kvlint: ignore[KV101]\n"}).run(**{"fail-on": "error"})
            self.assertEqual([s.proc.returncode for s in pr.steps], [0] * len(pr.steps),
                             [s.proc.stdout + s.proc.stderr for s in pr.steps])
            self.assertEqual(pr.outputs["findings"], "2")
            self.assertEqual(pr.outputs["exit-code"], "0")
            self.assertIn("## kvlint: 2 findings", pr.summary)
            self.assertNotIn("OldDecoder", pr.summary)

        # The pull request re-spaces the old cache's line (same fingerprint) and adds a cache:
        # --diff alone would report both, the baseline from main keeps the old one out.
        with tempfile.TemporaryDirectory() as d:
            base = IMPORTS + cache_class("OldDecoder")
            respaced = base.replace("self.OldDecoder_cache = DynamicCache()", "self.OldDecoder_cache  =  DynamicCache()")
            pr = PullRequestRun(Path(d), {"model.py": base},
                                {"model.py": "# moved down\n" + respaced + "\n\n" + cache_class("NewDecoder")})
            baseline = Path(d) / "baseline.json"
            git(pr.work, "checkout", "-q", "main")
            subprocess.run([ARGS.kvlint, "check", str(pr.work), "--write-baseline", str(baseline), "-q",
                            "-o", os.devnull], check=True)
            git(pr.work, "checkout", "-q", "feature")
            pr.run(**{"base-ref": "HEAD~1", "sarif-file": "out/kvlint.sarif"})
            self.assertEqual(pr.outputs["findings"], "2")
            pr.run(**{"base-ref": "HEAD~1", "baseline": str(baseline), "sarif-file": "out/kvlint.sarif"})
            self.assertEqual(pr.outputs["findings"], "1")
            self.assertEqual(pr.outputs["sarif-file"], "out/kvlint.sarif")
            self.assertTrue((pr.work / "out" / "kvlint.sarif").is_file())
            self.assertIn("NewDecoder", pr.summary)
            self.assertNotIn("OldDecoder", pr.summary)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--kvlint", required=True)
    parser.add_argument("--schema", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
