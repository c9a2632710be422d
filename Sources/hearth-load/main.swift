#if canImport(Glibc)
import Glibc
#endif
import HearthSystem

// hearth-load: the benchmarks' load generator. See Options.usage and
// scripts/bench/wire.sh; one JSON result line on stdout, progress on stderr.
// `hearth-load floor` is the push floor's server instead (FloorOptions.usage,
// scripts/bench/push_floor.sh).

func runLoad(_ arguments: [String]) -> Int32 {
    do {
        let options = try Options.parse(arguments)
        Syscall.ignoreSIGPIPE()
        let limit = (try? Syscall.raiseOpenFileLimit()) ?? 0
        let needed = options.subscribers + options.writerConnections + 64
        guard limit >= needed else {
            throw LoadError.usage("the open-file limit \(limit) is too low for \(options.subscribers) connections (raise ulimit -n)")
        }
        var result = try Fanout(options: options).run()
        result["date"] = .string(localDate())
        let line = jsonLine(result) + "\n"
        try? Syscall.writeAll(1, Array(line.utf8))
        if let out = options.out {
            do {
                try Syscall.append(Array(line.utf8), toFile: out)
            } catch {
                throw LoadError.failed("--out \(out): \(error)")
            }
        }
        return 0
    } catch {
        printError("hearth-load: \(error)")
        if case LoadError.usage = error { return 2 }
        return 1
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
exit(arguments.first == "floor" ? runFloor(arguments) : runLoad(arguments))
