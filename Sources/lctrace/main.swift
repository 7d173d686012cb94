import Foundation
import LCTraceCLI

// Everything lives in LCTraceCLI so tests can run commands in-process; this only exits.
exit(CLI.run(Array(CommandLine.arguments.dropFirst())))
