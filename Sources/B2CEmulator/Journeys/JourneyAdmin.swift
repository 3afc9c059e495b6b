import B2CProtocol
import Foundation
import Hummingbird

/// The journey recorder on the admin surface: `GET /_admin/journeys[?user=&policy=&client=]` (newest first),
/// `GET /_admin/journeys/{id}` (every event, with the codes the journey sent and the callouts it made), `DELETE
/// /_admin/journeys`. Asked for HTML (a browser), the two GETs answer pages (`JourneyPages.swift`).
extension AdminEndpoint {
    func journeyRecorderRoutes(_ on: AdminRoute) {
        on("journeys", .get) { request, _ in
            let q = try request.queryParameters()
            let found = self.store.journeys.list(user: q["user"], policy: q["policy"], clientId: q["client"])
            if Self.wantsHTML(request) { return self.journeysPage(found) }
            return .json(["journeys": .array(found.map(\.summary))])
        }
        on("journeys/:id", .get) { request, context in
            let id = context.parameters.get("id") ?? ""
            guard let journey = self.store.journeys.journey(id) else {
                throw AdminError(status: 404, message: "no journey '\(id)' (GET /_admin/journeys lists the last 200)")
            }
            if Self.wantsHTML(request) { return try self.journeyPage(journey) }
            return .json(try self.journeyJSON(journey))
        }
        on("journeys", .delete) { _, _ in
            self.store.journeys.clear()
            return .empty(204)
        }
    }

    /// A journey with what it left elsewhere: the messages of the outbox it sent and the callouts it made.
    func journeyJSON(_ journey: JourneyRecord) throws -> JSONValue {
        guard case .object(var o) = journey.json else { return journey.json }
        o["messages"] = .array(try store.outbox.messages(to: nil).filter { $0.journey == journey.id }.map(\.json))
        o["callouts"] = .array(store.callouts.all.filter { $0.journey == journey.id }.map(\.json))
        return .object(o)
    }
}
