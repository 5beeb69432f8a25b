//! Records the git commit bbrlab is built from, with `-dirty` when the
//! checkout had uncommitted changes, so every result it writes
//! (summary.json, the report, a kernel jitter sweep) names the code that
//! produced it. This is the one source of provenance: nothing asks git
//! again at run time, where the current directory may be another checkout.

use std::path::Path;
use std::process::Command;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    // A build outside a checkout (a source tarball) can name its commit.
    println!("cargo:rerun-if-env-changed=BBRLAB_GIT_COMMIT");
    let given = std::env::var("BBRLAB_GIT_COMMIT")
        .ok()
        .filter(|s| !s.is_empty());
    if given.is_some() {
        println!("cargo:rustc-env=BBRLAB_GIT_COMMIT_GIVEN=1");
    }
    let commit = given
        .or_else(|| {
            let head = git(&["rev-parse", "--short=12", "HEAD"])?;
            // Tracked files changed (untracked ones, such as outputs, are
            // not the code). `git status` prints nothing for a clean tree.
            let dirty = Command::new("git")
                .args(["status", "--porcelain", "--untracked-files=no"])
                .current_dir(&root)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .is_some_and(|o| !o.stdout.is_empty());
            Some(if dirty { format!("{head}-dirty") } else { head })
        })
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BBRLAB_GIT_COMMIT={commit}");
    // Rebuild when HEAD moves (a commit or a checkout), not on every edit.
    // HEAD is per worktree; branches live in the common directory.
    let git_dir = git(&["rev-parse", "--absolute-git-dir"]);
    let common = git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]);
    // (Only paths that exist: cargo reruns a script whose watched path is
    // missing on every build.)
    let watch = |p: &Path| {
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    };
    match (git_dir, common) {
        (Some(dir), common) => {
            watch(&Path::new(&dir).join("HEAD"));
            let common = common.unwrap_or(dir);
            watch(&Path::new(&common).join("refs/heads"));
            watch(&Path::new(&common).join("packed-refs"));
        }
        // git failed (not installed, or refusing this checkout): watch the
        // checkout's .git anyway, so that a later build where git works
        // records the commit instead of keeping "unknown".
        (None, _) => watch(&root.join(".git")),
    }
    // An edit to the code or the scenarios can make a clean tree dirty
    // (or back): watch them too (cargo compares the newest mtime below).
    for dir in ["crates", "scenarios", "Cargo.toml", "Cargo.lock"] {
        watch(&root.join(dir));
    }
    println!("cargo:rerun-if-changed=build.rs");
}
