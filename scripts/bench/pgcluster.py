"""A throwaway PostgreSQL cluster for the Python benchmarks (index_build.py with
ENGINE=postgres), as lib.sh's start_pg_cluster does for the shell ones: initdb into a temp
folder, 127.0.0.1, a free port, fsync on, trust for the superuser `admin`, run as the
`postgres` user when this runs as root. A fresh database per server; stopped and removed by
`stop`.
"""
import glob
import os
import shutil
import socket
import subprocess
import tempfile


def bindir():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise SystemExit("no PostgreSQL (initdb) under /usr/lib/postgresql; apt-get install postgresql")
    return os.path.dirname(found[-1])


def as_pg(args):
    if os.getuid() == 0:
        args = ["runuser", "-u", "postgres", "--"] + args
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)


class Cluster:
    def __init__(self, max_connections=200):
        self.bin = bindir()
        self.dir = tempfile.mkdtemp(prefix="hearth-bench-pg.")
        if os.getuid() == 0:
            shutil.chown(self.dir, "postgres")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        as_pg([f"{self.bin}/initdb", "-D", f"{self.dir}/data", "-U", "admin", "--auth=trust", "-E", "UTF8", "--locale=C"])
        as_pg([f"{self.bin}/pg_ctl", "-D", f"{self.dir}/data", "-l", f"{self.dir}/log", "-w", "-o",
               f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} -c max_connections={max_connections}", "start"])
        self.databases = 0

    def new_database(self):
        """The URL of a new, empty database."""
        self.databases += 1
        name = f"bench_{self.databases}"
        subprocess.run(["psql", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "admin", "-d", "postgres",
                        "-v", "ON_ERROR_STOP=1", "-c", f"CREATE DATABASE {name}"], check=True)
        return f"postgres://admin@127.0.0.1:{self.port}/{name}"

    def stop(self):
        try:
            as_pg([f"{self.bin}/pg_ctl", "-D", f"{self.dir}/data", "-m", "immediate", "stop"])
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
