import FenceEngine
import FenceNATS

extension Arguments {
    /// `--nats URL[,URL...]`: the servers (all of a cluster's may be given).
    func natsServers() throws(UsageError) -> [String] {
        guard let v = values["nats"] else { throw UsageError("--nats URL is required (e.g. nats://127.0.0.1:4222)") }
        let urls = v.split(separator: ",").map { String($0.trimmingCharacters(in: .whitespaces)) }.filter { !$0.isEmpty }
        guard !urls.isEmpty else { throw UsageError("--nats needs at least one URL") }
        return urls
    }

    /// `--name NAME`: the deployment's stream, bucket and consumer prefix (default FENCE).
    func deploymentName() throws(UsageError) -> String {
        let n = values["name"] ?? "FENCE"
        guard !n.isEmpty, n.utf8.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }) else {
            throw UsageError("--name takes upper-case letters, digits and _")
        }
        return n
    }

    /// The event engine settings shared with `fence eval`: --dwell, --actions, --no-initial,
    /// --margin, --exit-delay, --cross.
    func engineSettings() throws(UsageError) -> EventSettings {
        var settings = EventSettings()
        settings.dwell = try double("dwell", default: 600)!
        guard settings.dwell >= 0 else { throw UsageError("--dwell must be >= 0") }
        if let list = values["actions"] {
            guard let actions = FenceActions(list: list) else { throw UsageError("--actions takes enter,exit,dwell,cross") }
            settings.actions = actions
        }
        settings.initialEvents = !flags.contains("no-initial")
        settings.hysteresisMargin = try double("margin", default: 0)!
        settings.exitDelay = try double("exit-delay", default: 0)!
        guard settings.hysteresisMargin >= 0, settings.exitDelay >= 0 else {
            throw UsageError("--margin and --exit-delay must be >= 0")
        }
        // Asking for `cross` in the actions asks for its detection too.
        settings.crossDetection = flags.contains("cross") || settings.actions.contains(.cross)
        return settings
    }
}
