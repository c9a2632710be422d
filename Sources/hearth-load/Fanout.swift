#if canImport(Glibc)
import Glibc
#endif
import HearthSystem
import Synchronization

/// harness.py's sse_once (and wire.py fanout around it) in one process: RSS of the fresh
/// server, N subscribers live, settle, RSS again, the open-loop writer, drain, figures.
/// Same definitions and result fields, plus `client: "hearth-load"`.
struct Fanout {
    let options: Options

    /// How often the main thread looks at the counters (harness.py: 0.25 s).
    static let pollSeconds = 0.25

    func run() throws(LoadError) -> [String: JSONField] {
        let serverPID = options.serverPID
        _ = CPUMeter.waitQuiet(threshold: options.quietPercent, maxWait: options.quietWait, serverPID: serverPID)
        let whole = CPUMeter(serverPID: serverPID)
        let pid = getpid()
        let prefix = "bm" + randomTag(8) + "-"
        let count = options.writeCount
        let setup = SubscriberSetup(options: options, pid: pid, prefix: Array(prefix.utf8), eventsPerConnection: count)
        let rss0 = serverPID > 0 ? ProcessStats.rssKiB(serverPID) : nil

        // Subscribers: T threads, contiguous shards, the open concurrency split between them.
        let threads = min(options.threads, options.subscribers)
        var workers: [SubscriberThread] = []
        var handles: [pthread_t] = []
        let openStart = Syscall.monotonicSeconds()
        for index in 0..<threads {
            let lower = options.subscribers * index / threads, upper = options.subscribers * (index + 1) / threads
            let worker = SubscriberThread(setup: setup, indices: lower..<upper, openLimit: options.openConcurrency / threads,
                                          seed: UInt64(UInt32(bitPattern: pid)) << 32 | UInt64(index + 1))
            workers.append(worker)
            do {
                handles.append(try Syscall.spawnThread { worker.run() })
            } catch {
                for worker in workers { worker.counters.stop.store(true, ordering: .releasing) }
                for handle in handles { Syscall.joinThread(handle) }
                throw .system(error)
            }
        }
        defer {
            for worker in workers { worker.counters.stop.store(true, ordering: .releasing) }
            for handle in handles { Syscall.joinThread(handle) }
        }
        let openDeadline = openStart + options.readyTimeout + 60
        while !workers.allSatisfy({ $0.counters.openingDone.load(ordering: .acquiring) }) {
            guard Syscall.monotonicSeconds() < openDeadline else { throw .failed("subscriber threads did not finish opening") }
            Syscall.sleep(seconds: 0.02)
        }
        let connectSeconds = Syscall.monotonicSeconds() - openStart
        let ready = workers.reduce(0) { $0 + $1.counters.ready.load(ordering: .relaxed) }
        let failed = workers.reduce(0) { $0 + $1.counters.failed.load(ordering: .relaxed) }
        printError("hearth-load: \(ready) of \(options.subscribers) \(options.transport.rawValue) subscribers live in \(rounded(connectSeconds, 2)) s, \(failed) failed")

        Syscall.sleep(seconds: options.settle)
        let rssSubscribed = serverPID > 0 ? ProcessStats.rssKiB(serverPID) : nil
        let clientCPU0 = workers.reduce(0.0) { $0 + Syscall.cpuSeconds(of: $1.counters.cpuClock.load(ordering: .acquiring)) }
        let busy0 = ProcessStats.busySeconds(), own0 = Syscall.processCPUSeconds()
        let server0 = serverPID > 0 ? ProcessStats.cpuSeconds(serverPID) : nil

        // The writer, open loop; the server's RSS peak sampled meanwhile.
        let writer = WriterThread(options: options, marker: prefix, pid: pid)
        let writeStart = Syscall.monotonicSeconds()
        let writerDone = WriterDone()
        let writerHandle: pthread_t
        do {
            writerHandle = try Syscall.spawnThread {
                writer.run()
                writerDone.flag.store(true, ordering: .releasing)
            }
        } catch {
            throw .system(error)
        }
        var rssPeak = rssSubscribed ?? 0
        while !writerDone.flag.load(ordering: .acquiring) {
            Syscall.sleep(seconds: Self.pollSeconds)
            if serverPID > 0 { rssPeak = max(rssPeak, ProcessStats.rssKiB(serverPID) ?? 0) }
        }
        Syscall.joinThread(writerHandle)
        let records = writer.records
        let okSeqs = records.indices.filter { records[$0].status >= 200 && records[$0].status < 300 }
        let sends = records.map(\.sent).filter { $0 > 0 }.sorted()
        let achieved = sends.count > 1 && sends.last! > sends.first! ? Double(sends.count - 1) / (sends.last! - sends.first!) : nil
        let listeners = options.ownPaths ? (workers.first?.counters.firstReady.load(ordering: .relaxed) == true ? 1 : 0) : ready
        let expected = listeners * okSeqs.count

        // Drain: until every expected event arrived, or no progress for --stall s.
        var last = -1, lastChange = Syscall.monotonicSeconds()
        let drainEnd = Syscall.monotonicSeconds() + options.drain
        while Syscall.monotonicSeconds() < drainEnd {
            let total = workers.reduce(0) { $0 + $1.counters.received.load(ordering: .relaxed) }
            if total >= expected { break }
            if total != last {
                last = total
                lastChange = Syscall.monotonicSeconds()
            } else if Syscall.monotonicSeconds() - lastChange > options.stall {
                break
            }
            if serverPID > 0 { rssPeak = max(rssPeak, ProcessStats.rssKiB(serverPID) ?? 0) }
            Syscall.sleep(seconds: Self.pollSeconds)
        }
        let writeEnd = Syscall.monotonicSeconds()
        let server1 = serverPID > 0 ? ProcessStats.cpuSeconds(serverPID) : nil
        let busy1 = ProcessStats.busySeconds(), own1 = Syscall.processCPUSeconds()
        let clientCPU1 = workers.reduce(0.0) { $0 + Syscall.cpuSeconds(of: $1.counters.cpuClock.load(ordering: .acquiring)) }
        let lost = workers.reduce(0) { $0 + $1.counters.lost.load(ordering: .relaxed) }
        for worker in workers { worker.counters.stop.store(true, ordering: .releasing) }
        for handle in handles { Syscall.joinThread(handle) }
        handles = []

        // Figures, as sse_once computes them.
        let wall = max(1e-6, writeEnd - writeStart)
        let generator = own1 - own0
        let serverUsed = server0.flatMap { before in server1.map { $0 - before } } ?? 0
        let foreign = max(0, 100 * ((busy1 - busy0) - generator - serverUsed) / wall)
        var isOK = [Bool](repeating: false, count: records.count)
        for seq in okSeqs { isOK[seq] = true }
        var latSend: [Double] = [], latAck: [Double] = []
        var lastPerSeq = [Double](repeating: 0, count: records.count)
        var lastReceive = -Double.infinity
        var other = 0, overflow = 0
        var samples: [String] = []
        for worker in workers {
            other += worker.otherEvents
            overflow += worker.overflow
            samples += worker.failSamples
            for index in 0..<worker.recorded {
                let seq = Int(worker.seqs[index]), time = worker.times[index]
                lastReceive = max(lastReceive, time)
                guard seq >= 0, seq < records.count, isOK[seq] else { continue }
                latSend.append(time - records[seq].scheduled)
                latAck.append(time - records[seq].ack)
                lastPerSeq[seq] = max(lastPerSeq[seq], time)
            }
        }
        latSend.sort()
        latAck.sort()
        let fanout = okSeqs.filter { lastPerSeq[$0] > 0 }.map { lastPerSeq[$0] - records[$0].scheduled }.sorted()
        let ackLatency = okSeqs.map { records[$0].ack - records[$0].sent }.sorted()
        let firstSend = okSeqs.map { records[$0].scheduled }.min() ?? writeStart
        if lastReceive == -Double.infinity { lastReceive = writeEnd }
        let ms: (Double?) -> JSONField = { value in .optional(value.map { rounded($0 * 1000, 2) }) }

        var result: [String: JSONField] = [
            "kind": .string(options.transport == .sse ? "sse" : (options.rate > 0 && !options.ownPaths ? "wire_fanout" : "wire_idle")),
            "target": .string(options.label), "scenario": .string("sse_fanout"), "conc": .integer(options.subscribers),
            "subscribers_ready": .integer(ready), "subscribers_failed": .integer(failed),
            "connect_all_s": .number(rounded(connectSeconds, 2)),
            "write_rate": .number(options.rate), "writes": .integer(records.count), "writes_ok": .integer(okSeqs.count),
            "write_rate_achieved": .optional(achieved.map { rounded($0, 2) }),
            "write_ack_p50_ms": ms(percentile(ackLatency, 50)), "write_ack_p99_ms": ms(percentile(ackLatency, 99)),
            "events_expected": .integer(expected), "events_delivered": .integer(latSend.count),
            "delivery_ratio": expected > 0 ? .number(rounded(Double(latSend.count) / Double(expected), 4)) : .null,
            "events_per_s": .number(rounded(Double(latSend.count) / max(1e-6, lastReceive - firstSend), 1)),
            "lat_send_p50_ms": ms(percentile(latSend, 50)), "lat_send_p99_ms": ms(percentile(latSend, 99)),
            "lat_send_max_ms": ms(latSend.last),
            "lat_ack_p50_ms": ms(percentile(latAck, 50)), "lat_ack_p99_ms": ms(percentile(latAck, 99)),
            "fanout_all_p50_ms": ms(percentile(fanout, 50)), "fanout_all_p99_ms": ms(percentile(fanout, 99)),
            "lost_streams": .integer(lost), "other_events": .integer(other), "subscriber_procs": .integer(1),
            "client_cpu_pct": .number(rounded(100 * (clientCPU1 - clientCPU0) / wall, 1)),
            "loadgen_cpu_pct": .number(rounded(100 * generator / wall, 1)), "foreign_cpu_pct": .number(rounded(foreign, 1)),
            "machine_cpu_pct": .number(rounded(100 * (busy1 - busy0) / wall, 1)), "window_s": .number(rounded(wall, 2)),
            "fail_samples": .strings(Array(samples.prefix(3))),
            "client": .string("hearth-load"), "client_threads": .integer(threads),
            "source_addresses": .integer(options.sources), "run": .integer(options.run),
        ]
        if overflow > 0 { result["events_not_recorded"] = .integer(overflow) }
        if !writer.failSamples.isEmpty { result["writer_fail_samples"] = .strings(Array(writer.failSamples.prefix(3))) }
        if serverPID > 0 {
            result["rss_before_kib"] = .optional(rss0)
            result["rss_subscribed_kib"] = .optional(rssSubscribed)
            result["rss_peak_kib"] = .integer(rssPeak)
            if let rss0, let rssSubscribed {
                result["rss_per_conn_kib"] = .number(rounded(Double(rssSubscribed - rss0) / Double(max(1, ready)), 2))
            }
            result["server_cpu_pct"] = server0 != nil ? .number(rounded(100 * serverUsed / wall, 1)) : .null
        }
        if options.transport == .wire {
            result["paths"] = .string(options.ownPaths ? "own" : "one")
            result["listen_path"] = .string(options.pathTemplate)
            result["ns"] = .string(options.namespace)
            result["stage"] = .string(options.stage)
        }
        if options.rate <= 0 {
            // wire.py: without writes the CPU split covers the whole run (open, settle, RSS).
            for (key, value) in whole.stop() { result[key] = value }
            result["client_cpu_pct"] = .null
        }
        return result
    }

    private func randomTag(_ length: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var generator = SystemRandomNumberGenerator()
        return String(decoding: (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }, as: UTF8.self)
    }
}

/// Set by the writer thread when it is done.
final class WriterDone: Sendable {
    let flag = Atomic<Bool>(false)
}
