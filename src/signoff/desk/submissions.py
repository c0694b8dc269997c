"""Engineering's side of the desk: what engineering may read of a bug (dossiers, the change's diff),
its advisory notes, and its submissions, measured here in the sandbox: the reproduction (a test that
fails by an assertion on a green baseline) and the fix (committed with the confirmed test copied in
unchanged, verified, and opened as a draft change request assigned to the human owner)."""

from __future__ import annotations

from typing import Any

from signoff import airlock, git
from signoff.desk import decisions, measure
from signoff.desk.base import DeskBase, sha
from signoff.desk.credentials import DeskCaller, require
from signoff.desk.model import Bug
from signoff.desk.records import NOTE_KINDS
from signoff.kernel import pathglob
from signoff.kernel.errors import ConflictError, RefusedError, UsageError

MAX_TEST_BYTES = 50_000


class SubmissionSteps(DeskBase):
    # -- reading and advisory notes -------------------------------------------------------------

    def change_diff(self, actor: DeskCaller, bug_id: str, bug: Bug | None = None) -> str:
        """The diff of the bug's change request, for the model's advisory review (`bug`: the bug
        as the caller just read it, so that a page showing both reads it once)."""
        require(actor, "engineering", "owner", what="read engineering work")
        bug = bug if bug is not None and bug.bug_id == bug_id else self.bug(bug_id)
        if bug.change is None:
            raise ConflictError(f"{bug_id} has no change request", "nothing to review")
        return self.forge.diff(bug.change["repo"], bug.change["base"], bug.change["head"])

    def dossier(self, actor: DeskCaller, bug_id: str, bug: Bug | None = None) -> dict[str, Any]:
        """What engineering may read of a bug: dossiers (redacted, labelled), never raw text
        (`bug`: the bug as the caller just read it, read once for a page or answer that shows both)."""
        require(actor, "engineering", "owner", what="read engineering work")
        bug = bug if bug is not None and bug.bug_id == bug_id else self.bug(bug_id)
        return {"bug_id": bug_id, "state": bug.state, "round": bug.round, "component": bug.component,
                "title": bug.title, "dossiers": [r["rendered"] for r in bug.reports.values()],
                "reproduction": bug.reproduction, "rejected_tests": sorted(bug.rejected_tests),
                "change": bug.change}

    def add_note(self, actor: DeskCaller, bug_id: str, kind: str, note: dict[str, Any], agent: dict[str, Any],
                 round_: int | None = None, key: str | None = None) -> None:
        """An advisory note (triage, model review): filtered like reporter text and stored apart.
        No code path reads a note to decide anything."""
        require(actor, "engineering", what="add an advisory note")
        if kind not in ("triage", "review"):
            raise UsageError(f"note kind {kind!r} is not known", "use triage or review")
        self.bug(bug_id)
        text = "\n".join(f"{k}: {v}" for k, v in sorted(note.items()))
        verdict = airlock.scan(text[:200_000])
        if verdict.quarantined:
            payload: dict[str, Any] = {"kind": kind, "quarantined": True, "families": list(verdict.families),
                                       "raw_sha256": verdict.raw_sha256}
        else:
            assert verdict.dossier is not None
            payload = {"kind": kind, "quarantined": False, "note": verdict.dossier.render(),
                       "raw_sha256": verdict.raw_sha256}
        payload["agent"] = {k: agent.get(k) for k in ("provider", "model", "kind", "call_id")}
        payload["evidence_kind"] = "advisory" if agent.get("kind") == "advisory" else "simulated"
        payload["round"] = round_
        # Keyed by the job that asked for it, so a redelivered job adds no second note.
        self.ledger.append(f"desk/notes/{bug_id}", None, [NOTE_KINDS[kind](**payload).new_event()],
                           idempotency_key=f"desk:note:{key}" if key else None)

    # -- reproduction ---------------------------------------------------------------------------

    def submit_reproduction(self, actor: DeskCaller, bug_id: str, round_: int, test_path: str, test_source: str,
                            agent: dict[str, Any] | None = None) -> Bug:
        """The reproducer's test, measured here in the sandbox. It counts only if the baseline suite
        is green and the test fails by an assertion; a rejected test is never reused."""
        require(actor, "engineering", what="submit a reproduction")
        bug = self.bug(bug_id)
        if bug.state not in ("reproducing", "reopened") or bug.round != round_:
            raise ConflictError(f"{bug_id} is not reproducing round {round_} (state {bug.state}, round {bug.round})",
                                "claim the current work item")
        expected = self.config.test_path(bug_id)
        if test_path != expected:
            raise RefusedError(f"regression test path {test_path!r} is not allowed", f"write it at {expected}")
        if not isinstance(test_source, str) or not test_source.strip() or len(test_source.encode()) > MAX_TEST_BYTES:
            raise UsageError(f"test source must be 1 to {MAX_TEST_BYTES} bytes of text", "send the whole test file")
        digest = sha(test_source)
        if digest in bug.rejected_tests:
            raise RefusedError("this test was rejected by a reporter before and is never reused",
                               "write a new test for what the reporter described")
        repo = self.forge.path(self.config.repo)
        base = self.forge.head(self.config.repo)
        m = measure.reproduce(self.settings, repo, base, self.config.test_dir, test_path, test_source,
                              self.config.timeout, self.config.stack)
        cmd = decisions.RecordReproduction(round_, test_path, test_source, digest, base, m.ok, m.reason, m.detail,
                                           m.evidence, agent)
        return self.decide(bug_id, cmd)

    # -- fix ------------------------------------------------------------------------------------

    def check_fix_files(self, base: str, files: dict[str, str], test_path: str) -> None:
        """RefusedError unless `files` are few, small, text, inside the fixer's paths, not the
        regression test, and reach no symbolic link of the repository at `base`."""
        if not isinstance(files, dict) or not files:
            raise UsageError("a fix needs at least one file", "send {path: complete new content}")
        if len(files) > self.config.max_fix_files:
            raise RefusedError(f"a fix may change at most {self.config.max_fix_files} files, not {len(files)}",
                               "keep the fix small")
        repo = self.forge.path(self.config.repo)
        for path, content in files.items():
            parts = path.split("/")
            if (not path or path.startswith("/") or "\\" in path or any(p in ("", ".", "..") for p in parts)
                    or parts[0] in (".git", ".signoff")):
                raise RefusedError(f"path {path!r} leaves the repository or names git internals",
                                   "use a relative path inside the repository")
            if "node_modules" in parts:
                # A package planted in the checkout would shadow the one installed from the lock file.
                raise RefusedError(f"path {path!r} is inside a node_modules folder",
                                   "change the project's own files; packages come from its lock file")
            if path == test_path or not pathglob.matches(path, self.config.fix_paths):
                raise RefusedError(f"path {path!r} is not one the fixer may change",
                                   f"allowed: {', '.join(self.config.fix_paths)}")
            if not isinstance(content, str) or len(content.encode()) > self.config.max_file_bytes:
                raise RefusedError(f"{path}: content must be text of at most {self.config.max_file_bytes} bytes",
                                   "send the complete file, smaller")
            if git.mode_at(repo, base, path) == "120000":
                raise RefusedError(f"{path} is a symbolic link in the repository", "fix the file it points to")
            # every parent folder must be a folder, not a link
            for i in range(1, len(parts)):
                if git.mode_at(repo, base, "/".join(parts[:i])) == "120000":
                    raise RefusedError(f"{path} goes through a symbolic link", "use the real path")

    def submit_fix(self, actor: DeskCaller, bug_id: str, round_: int, attempt: int, files: dict[str, str],
                   summary: str = "", agent: dict[str, Any] | None = None) -> Bug:
        """A fixer's complete files: committed with the confirmed test copied in unchanged, measured in
        the sandbox (new test, whole suite, configured checks); success opens a draft change request
        assigned to the human owner. After that the agents can do nothing more for this bug."""
        require(actor, "engineering", what="submit a fix")
        bug = self.bug(bug_id)
        if bug.state != "fixing" or bug.round != round_ or bug.reproduction is None:
            raise ConflictError(f"{bug_id} is not being fixed in round {round_} (state {bug.state})",
                                "fixing is legal only after the reporter confirmed the reproduction")
        if attempt != bug.fix_attempts + 1:
            raise ConflictError(f"attempt {attempt} is not the next one ({bug.fix_attempts + 1})", "reload the bug")
        repro = bug.reproduction
        self.forge.fetch(self.config.repo, repro["base"])
        agent_info = {k: (agent or {}).get(k) for k in ("provider", "model", "kind", "call_id")}
        try:
            self.check_fix_files(repro["base"], files, repro["test_path"])
        except RefusedError as exc:
            self.fix_failed(actor, bug_id, round_, attempt, f"refused: {exc.message}", agent_info)
            raise
        repo = self.config.repo
        branch = f"desk/{bug_id.lower()}-r{round_}-a{attempt}"
        tree = {**files, repro["test_path"]: repro["test_source"]}
        commit = self.forge.commit(repo, repro["base"], tree, f"{bug_id}: {summary or 'fix'}\n\nRegression test "
                                   f"{repro['test_path']} copied unchanged.", "signoff-engineering", branch)
        m = measure.verify_fix(self.settings, self.forge.path(repo), repro["base"], commit, self.config.test_dir,
                               repro["test_path"], repro["test_source"], list(self.config.fix_paths),
                               checks=self.config.checks, timeout=self.config.timeout, stack=self.config.stack)
        if not m.ok:
            self.fix_failed(actor, bug_id, round_, attempt, m.reason, agent_info, m.evidence)
            return self.bug(bug_id)
        # After a crash between opening the change request and recording it, the retried job finds
        # the change request already there: reuse it (same tree), or move its head to what was measured.
        existing = [c for c in self.forge.changes(repo) if c["branch"] == branch and not c.get("merged")]
        if existing:
            cr = existing[0]
            if self.forge.tree(repo, cr["head"]) != self.forge.tree(repo, commit):
                cr["head"] = self.forge.push(repo, cr["number"], tree, "measured fix", "signoff-engineering", "Bot")
        else:
            cr = self.forge.open_change(
                repo, branch, repro["base"], f"{bug_id}: {summary or bug.title}"[:200], "signoff-engineering",
                self.config.owner, body=f"Draft fix for {bug_id}. Regression test: {repro['test_path']}. {m.reason}")
        cmd = decisions.FixVerified(round_, attempt, commit, m.evidence, m.detail, agent_info, {
            "repo": repo, "number": cr["number"], "head": cr["head"], "base": repro["base"], "branch": branch,
            "assignee": self.config.owner})
        return self.decide(bug_id, cmd, idempotency_key=f"desk:{bug_id}:change:{round_}:{attempt}")

    def fix_failed(self, actor: DeskCaller, bug_id: str, round_: int, attempt: int, reason: str, agent: dict[str, Any],
                   evidence: str | None = None) -> None:
        """Record a failed fix attempt (a refused proposal, a fix the sandbox did not verify): retried
        until the configured attempts are spent, then the bug needs a human."""
        require(actor, "engineering", what="record a failed fix")
        cmd = decisions.FixFailed(round_, attempt, reason, agent, evidence)
        self.decide(bug_id, cmd)
