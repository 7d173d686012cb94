import Foundation

/// Words for a POSIX shell: the follow-up commands lctrace prints and the hints of its errors
/// are pasted into one.
package enum Shell {
    /// `text` as one shell word: as is when it is plain, in double quotes when nothing in it
    /// is special there (and `preferDouble`), else in single quotes.
    package static func word(_ text: String, preferDouble: Bool = false) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || "-_./:=@%+,".unicodeScalars.contains($0)
        }
        if plain { return text }
        if preferDouble && !text.contains(where: { "\"$`\\!".contains($0) }) { return "\"" + text + "\"" }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// The system's words for an `errno` value, lowercased to sit inside a sentence.
package func systemErrorReason(_ code: Int32) -> String {
    let text = String(cString: strerror(code))
    return text.prefix(1).lowercased() + text.dropFirst()
}

/// Names of the kinds of file `stat` reports, for messages.
package enum FileKind {
    package static func name(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "a special file"
        }
    }
}
