"""A small git repository of a choir's sheet-music notes, for the real `mcp-server-git` to serve.

`make_repo(dir)` creates it (three commits on `main`, a `draft-programme` branch, an uncommitted change and an
untracked file); `POLICY` is the assistant's policy; `server_args(repo)` starts the server; `facts(repo)` the values a
person working in it knows that no schema tells (its path, its branches and files), as a user passes them.
"""
import os, subprocess, sys
from pathlib import Path

POLICY = """# Choir librarian's git assistant
- Work only in the choir's repository the user names; ask for its path if they have not given it.
- Show the user what changed (status or diff) before staging or committing anything.
- Never commit without the user's explicit yes, and use the commit message they approve.
- Never reset or discard staged changes unless the user asks for exactly that.
- Create or switch branches only when the user asks; say which branch is checked out afterwards.
- If a git command fails, report the error as it was given; never claim a commit was made.
"""

DATE = "2026-11-02T10:00:00+00:00"   # fixed, so the repository (and its commit ids) are the same every time

def _git(repo, *args):
    env = {**os.environ, "GIT_AUTHOR_DATE": DATE, "GIT_COMMITTER_DATE": DATE}
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=Choir Librarian", "-c", "user.email=librarian@choir.test",
                    *args], check=True, capture_output=True, env=env)

def make_repo(d) -> Path:
    "Create the choir's repository in `d` (a new folder) and return it."
    r = Path(d)
    r.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(r)], check=True)
    (r / "README.md").write_text("# Riverside Choir library\nScores we own and where they are.\n")
    _git(r, "add", "README.md"); _git(r, "commit", "-qm", "Start the library notes")
    (r / "scores.csv").write_text("title,composer,copies,shelf\nMessiah,Handel,40,A3\nRequiem,Faure,32,B1\n")
    _git(r, "add", "scores.csv"); _git(r, "commit", "-qm", "List the scores on the shelves")
    (r / "concerts.md").write_text("## Spring 2027\n- Faure Requiem\n")
    _git(r, "add", "concerts.md"); _git(r, "commit", "-qm", "Plan the spring concert")
    _git(r, "branch", "draft-programme")
    with open(r / "scores.csv", "a") as f: f.write("Magnificat,Rutter,28,B2\n")     # unstaged change
    (r / "loans.txt").write_text("Requiem: 4 copies lent to St Mary's\n")            # untracked
    return r

def facts(repo) -> dict:
    "Values the person may give: a branch that exists and one that does not yet, files, revisions, a commit message."
    return {"repo_path": [str(repo)], "branch_name": ["draft-programme", "easter-2027"], "base_branch": ["main"],
            "target": ["main", "draft-programme"], "revision": ["HEAD", "main~1"], "branch_type": ["local", "all"],
            "files": [["scores.csv"], ["loans.txt"]], "message": ["Add the Rutter Magnificat to the scores"]}

def server_args(repo) -> list:
    return ["-m", "mcp_server_git", "--repository", str(repo)]
