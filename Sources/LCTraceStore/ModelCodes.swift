import LCTraceModel

/// The codes of the packed model tables' `codes` columns (SQLite's schema 3, PostgreSQL's
/// schema 4), as their `*_rows` views decode them.
package enum ModelCodes {
    package static func code(_ state: AppearanceState) -> Int64 {
        switch state {
        case .hidden: return 0
        case .appearing: return 1
        case .visible: return 2
        case .disappearing: return 3
        }
    }

    package static func code(_ end: InstanceEnd?) -> Int64 {
        switch end {
        case nil: return 0
        case .deinit?: return 1
        case .reused?: return 2
        }
    }

    package static func code(_ how: ReleaseHow?) -> Int64 {
        switch how {
        case nil: return 0
        case .pop?: return 1
        case .dismiss?: return 2
        case .removeFromParent?: return 3
        case .ancestor?: return 4
        case .chain?: return 5
        case .root?: return 6
        }
    }

    package static func code(_ ending: AppearanceCycle.Ending) -> Int64 {
        switch ending {
        case .disappeared: return 0
        case .disappearCancelled: return 1
        case .visibleAtEnd: return 2
        case .deinit: return 3
        case .sessionEnd: return 4
        case .violation: return 5
        case .lost: return 6
        }
    }

    package static func code(_ outcome: AppearanceCycle.Outcome) -> Int64 {
        switch outcome {
        case .completed: return 0
        case .cancelled: return 1
        case .interrupted: return 2
        }
    }

    /// `instances.codes`: final state, end, release.
    package static func instance(state: AppearanceState, end: InstanceEnd?, release: ReleaseHow?) -> Int64 {
        code(state) | code(end) << 2 | code(release) << 4
    }

    /// `appearances.codes`: ending, outcome, animated (0 unknown, 2 no, 3 yes), interactive, backgrounded.
    package static func appearance(ending: AppearanceCycle.Ending, outcome: AppearanceCycle.Outcome, animated: Bool?,
                           interactive: Bool, backgrounded: Bool) -> Int64 {
        let animatedCode: Int64 = animated.map { $0 ? 3 : 2 } ?? 0
        return code(ending) | code(outcome) << 3 | animatedCode << 5 | (interactive ? 1 << 7 : 0) | (backgrounded ? 1 << 8 : 0)
    }
}
