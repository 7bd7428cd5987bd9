//! MPI programs launched by Slurm's `srun` instead of `mpirun`: the test starts a one-node
//! Slurm of its own (munged, slurmctld and slurmd on free local ports, everything in a scratch
//! directory, stopped when the test ends), runs the MPI ring fixture through `srun --mpi=pmix`,
//! and checks one profile per rank, named from Slurm's process ids, with the job Slurm gave and
//! the communication records.

use instrument_profile::Profile;
use instrument_tests::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A one-node Slurm cluster in `dir`, stopped (its daemons killed) when dropped.
struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let cluster = Cluster { dir: dir.to_path_buf() };
        for sub in ["state", "spool", "munge"] {
            std::fs::create_dir_all(dir.join(sub)).expect("a cluster directory");
        }
        cluster.start_munge();
        std::fs::write(cluster.conf(), cluster.config()).expect("slurm.conf");
        for daemon in [&["slurmctld", "-i"][..], &["slurmd"]] {
            let output = run(cluster.command(daemon[0]).args(&daemon[1..]));
            assert_success(
                &output,
                &format!("{} (is Debian's slurm-wlm installed? scripts/install-deps)", daemon[0]),
            );
        }
        cluster.wait_until_idle();
        cluster
    }

    fn start_munge(&self) {
        use std::os::unix::fs::PermissionsExt;
        let munge = self.dir.join("munge");
        std::fs::set_permissions(&munge, std::fs::Permissions::from_mode(0o700)).expect("munge directory");
        let key: Vec<u8> = (0..1024u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        let key_file = munge.join("munge.key");
        std::fs::write(&key_file, key).expect("munge key");
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).expect("munge key");
        let output = run(Command::new(sbin("munged"))
            .arg("--force")
            .arg(format!("--key-file={}", key_file.display()))
            .arg(format!("--socket={}", munge.join("munge.sock").display()))
            .arg(format!("--pid-file={}", munge.join("munged.pid").display()))
            .arg(format!("--log-file={}", munge.join("munged.log").display()))
            .arg(format!("--seed-file={}", munge.join("seed").display())));
        assert_success(&output, "munged (is Debian's munge installed? scripts/install-deps)");
    }

    fn conf(&self) -> PathBuf {
        self.dir.join("slurm.conf")
    }

    /// slurm.conf: this host as controller and only node, on two free ports, run by this user.
    fn config(&self) -> String {
        let host = String::from_utf8(run(&mut Command::new("hostname")).stdout).expect("hostname");
        let host = host.trim();
        let user = String::from_utf8(run(Command::new("id").arg("-un")).stdout).expect("user");
        let user = user.trim();
        let (controller, node) = (free_port(), free_port());
        let d = self.dir.display();
        format!(
            "ClusterName=instrumenttest\nSlurmctldHost={host}(127.0.0.1)\nSlurmUser={user}\nSlurmdUser={user}\n\
             AuthType=auth/munge\nAuthInfo=socket={d}/munge/munge.sock\nCredType=cred/munge\n\
             StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\n\
             SlurmctldPort={controller}\nSlurmdPort={node}\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSchedulerType=sched/builtin\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nMpiDefault=none\nReturnToService=2\n\
             JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN\n\
             PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4\n"
        )
    }

    /// A Slurm command reading this cluster's configuration.
    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(sbin(program));
        command.env("SLURM_CONF", self.conf());
        command
    }

    fn wait_until_idle(&self) {
        let start = Instant::now();
        loop {
            let state = run(self.command("sinfo").args(["-h", "-o", "%T"]));
            if String::from_utf8_lossy(&state.stdout).trim() == "idle" {
                return;
            }
            let log = std::fs::read_to_string(self.dir.join("slurmd.log")).unwrap_or_default();
            assert!(start.elapsed() < Duration::from_secs(60), "the Slurm node did not come up:\n{log}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for pid_file in ["slurmd.pid", "slurmctld.pid", "munge/munged.pid"] {
            if let Ok(pid) = std::fs::read_to_string(self.dir.join(pid_file)) {
                let _ = Command::new("kill").arg(pid.trim()).status();
            }
        }
    }
}

/// `name` on PATH, else in /usr/sbin (where Debian puts the daemons, often not on a user's PATH).
fn sbin(name: &str) -> PathBuf {
    let sbin = Path::new("/usr/sbin").join(name);
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    on_path.unwrap_or(sbin)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("its address").port()
}

fn build_ring(dir: &Path, compiler: &Path, name: &str) -> PathBuf {
    let out = dir.join(name);
    let output = run(Command::new("mpicc")
        .env("OMPI_CC", compiler)
        .arg("-O2")
        .arg(fixtures().join("mpi/ring.c"))
        .arg("-o")
        .arg(&out));
    assert_success(&output, &format!("mpicc with {}", compiler.display()));
    out
}

#[test]
fn mpi_ranks_launched_by_srun_each_write_their_profile() {
    let cluster_dir = scratch();
    let cluster = Cluster::start(cluster_dir.path());
    let dir = scratch();
    let plain = build_ring(dir.path(), Path::new("clang-22"), "ring-plain");
    let program = build_ring(dir.path(), &bin("instrument-cc"), "ring");
    let srun = |program: &Path| {
        let output = run(cluster
            .command("timeout")
            .args(["120", "srun", "-n", "2", "--mpi=pmix"])
            .arg(program)
            .current_dir(dir.path())
            .env("INSTRUMENT_PROFILE_DIR", dir.path()));
        assert_success(&output, "srun -n 2 --mpi=pmix");
        output
    };
    let plain_output = srun(&plain);
    assert!(profile_paths(dir.path()).is_empty(), "the plain build writes no profile");
    let output = srun(&program);
    assert_eq!(output.stdout, plain_output.stdout, "same output instrumented");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "ring sum 3, shared 25.0, gathered 3\n");

    let mut profiles: Vec<Profile> = profile_paths(dir.path()).iter().map(|p| load_profile(p)).collect();
    profiles.sort_by_key(|p| p.mpi.as_ref().map(|m| m.rank));
    assert_eq!(profiles.len(), 2, "one profile per rank");
    let job = profiles[0].mpi.as_ref().unwrap().job.clone();
    assert!(job.starts_with("slurm."), "the job is Slurm's: {job}");
    for (rank, profile) in profiles.iter().enumerate() {
        let mpi = profile.mpi.as_ref().expect("rank recorded");
        assert_eq!((mpi.rank as usize, mpi.size, &mpi.job), (rank, 2, &job));
        assert_eq!(function(profile, "pass_token").stats.calls, 3);
        let send = record(profile, "MPI_Send");
        assert_eq!((send.peer, send.calls, send.bytes), (Some(1 - rank as u32), 3, 36));
    }
    let names: Vec<String> = profile_paths(dir.path())
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for rank in 0..2 {
        assert!(names.iter().any(|n| n.starts_with(&format!("ring.rank{rank}."))), "{names:?}");
    }
    let summary = run(Command::new(bin("instrument")).arg("report").current_dir(dir.path()));
    assert_success(&summary, "report");
    assert!(String::from_utf8_lossy(&summary.stdout).contains(&format!("2 of 2 ranks, job {job}")));
}
