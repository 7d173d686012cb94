import Foundation
import LCTraceGen

// lctrace-gen: writes deterministic trace corpora, and their answer key beside the folder.
// The options, their defaults and the help live in GeneratorCommandLine (one table).

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("lctrace-gen: \(message)\n".utf8))
    exit(status)
}

let request: GeneratorCommandLine.Request
do {
    request = try GeneratorCommandLine.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error)", status: 64)
}
switch request {
case .help:
    print(GeneratorCommandLine.help, terminator: "")
case .generate(let line):
    do {
        print(try line.run())
    } catch {
        fail("\(error)", status: 74)
    }
}
