#if canImport(Glibc)
import Glibc
#endif
import HearthSystem

/// harness.py's proc stats, from /proc: the server's RSS and CPU, the machine's busy time.
/// The server is one process (Hearth starts no children), so its "tree" is the pid itself.
enum ProcessStats {
    static let clockTicks = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// VmRSS of `pid` in KiB; nil when the process is gone.
    static func rssKiB(_ pid: Int32) -> Int? {
        guard let text = file("/proc/\(pid)/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }

    /// utime + stime of `pid` in seconds; nil when the process is gone.
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let text = file("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / clockTicks
    }

    /// Machine-wide non-idle CPU seconds (all cores), from /proc/stat's first line.
    static func busySeconds() -> Double {
        guard let text = file("/proc/stat"), let line = text.split(separator: "\n").first else { return 0 }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 5 else { return 0 }
        let idle = values[3] + values[4]
        return (values.prefix(8).reduce(0, +) - idle) / clockTicks
    }

    private static func file(_ path: String) -> String? {
        guard let bytes = try? Syscall.readFile(path, limit: Limits.procFileBytes) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// harness.py's CpuMeter: machine CPU over a window split into server / this load generator
/// / foreign (anything else: another benchmark, a build).
struct CPUMeter {
    let serverPID: Int32
    let start = Syscall.monotonicSeconds()
    let busy = ProcessStats.busySeconds()
    let own = Syscall.processCPUSeconds()
    let server: Double?

    init(serverPID: Int32) {
        self.serverPID = serverPID
        server = serverPID > 0 ? ProcessStats.cpuSeconds(serverPID) : nil
    }

    /// loadgen_cpu_pct, foreign_cpu_pct, machine_cpu_pct, server_cpu_pct.
    func stop() -> [(String, JSONField)] {
        let wall = max(1e-6, Syscall.monotonicSeconds() - start)
        let machine = ProcessStats.busySeconds() - busy
        let generator = Syscall.processCPUSeconds() - own
        let serverUsed = server.flatMap { before in ProcessStats.cpuSeconds(serverPID).map { $0 - before } } ?? 0
        var out: [(String, JSONField)] = [
            ("loadgen_cpu_pct", .number(rounded(100 * generator / wall, 1))),
            ("foreign_cpu_pct", .number(rounded(max(0, 100 * (machine - generator - serverUsed) / wall), 1))),
            ("machine_cpu_pct", .number(rounded(100 * machine / wall, 1))),
        ]
        if server != nil { out.append(("server_cpu_pct", .number(rounded(100 * serverUsed / wall, 1)))) }
        return out
    }

    /// harness.py's wait_quiet: until other processes use under `threshold` % (measured
    /// over 1 s, 4 s apart), at most `maxWait` s; the last foreign CPU %.
    static func waitQuiet(threshold: Double, maxWait: Double, serverPID: Int32) -> Double {
        let end = Syscall.monotonicSeconds() + maxWait
        while true {
            let meter = CPUMeter(serverPID: serverPID)
            Syscall.sleep(seconds: 1)
            var foreign = 0.0
            for (key, value) in meter.stop() where key == "foreign_cpu_pct" {
                if case .number(let number) = value { foreign = number }
            }
            if foreign < threshold || Syscall.monotonicSeconds() > end {
                if foreign >= threshold { printError("warning: machine still busy (\(Int(foreign))% foreign CPU) after \(Int(maxWait))s") }
                return foreign
            }
            printError("waiting for a quiet machine: \(Int(foreign))% CPU used by other processes")
            Syscall.sleep(seconds: 4)
        }
    }
}

func printError(_ text: String) {
    try? Syscall.writeAll(2, Array((text + "\n").utf8))
}
