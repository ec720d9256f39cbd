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

    /// The deployment of `--name` on the servers of `--nats`, connected as `client`. Both
    /// options are checked before connecting, so a bad one is a usage error (status 2)
    /// whether or not a server answers, never a failed connection (status 1).
    func connectDeployment(client: String) throws -> (connection: NATSConnection, topology: Topology) {
        let name = try deploymentName()
        let servers = try natsServers()
        let connection = try NATSConnection(servers: servers, name: client)
        return (connection, try Deployment.topology(connection: connection, name: name))
    }
}
