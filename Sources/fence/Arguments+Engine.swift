import FenceEngine

extension Arguments {
    /// The event engine settings `fence eval` and `fence worker` share: --dwell, --actions,
    /// --no-initial, --margin, --exit-delay, --cross (`eval` adds --evict-idle).
    func engineSettings() throws(UsageError) -> EventSettings {
        var settings = EventSettings()
        settings.dwell = try double("dwell", default: 600)!
        guard settings.dwell >= 0 else { throw UsageError("--dwell must be >= 0") }
        if let list = values["actions"] {
            // An empty list would report nothing at all: more likely a lost variable than a wish.
            guard let actions = FenceActions(list: list), !actions.isEmpty else {
                throw UsageError("--actions takes one or more of enter,exit,dwell,cross, comma-separated; got '\(list)'")
            }
            settings.actions = actions
        }
        settings.initialEvents = !flags.contains("no-initial")
        settings.hysteresisMargin = try double("margin", default: 0)!
        settings.exitDelay = try double("exit-delay", default: 0)!
        guard settings.hysteresisMargin >= 0, settings.exitDelay >= 0 else {
            throw UsageError("--margin and --exit-delay must be >= 0")
        }
        // What EventSettings takes (`problem`), said with the option's name.
        guard settings.hysteresisMargin <= EventSettings.maxHysteresisMargin else {
            throw UsageError("--margin must be at most \(Int(EventSettings.maxHysteresisMargin)) metres (the longest distance on the Earth)")
        }
        // Asking for `cross` in the actions asks for its detection too.
        settings.crossDetection = flags.contains("cross") || settings.actions.contains(.cross)
        return settings
    }
}
