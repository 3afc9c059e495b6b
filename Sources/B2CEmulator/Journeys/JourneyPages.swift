import B2CProtocol
import Foundation
import Hummingbird

/// The journey recorder as pages a person opens in a browser: `/_admin/journeys` and `/_admin/journeys/{id}` asked for
/// HTML. No script. The admin surface answers only requests a person makes directly (not those a page makes), so the list
/// names each journey's address rather than linking to it, and a journey's page carries its codes and callouts itself,
/// linked within the page.
enum JourneyPageTemplates {
    /// Claims as a two-column grid beside each step; the table and the timeline in the page's width.
    private static let style = """
        main{max-width:60rem}dl#summary,dl.claims{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;margin:.3rem 0}\
        dl#summary dd,dl.claims dd{margin:0;overflow-wrap:anywhere}dl.claims{font-size:.85rem;color:#444}\
        ol#events li{margin:.6rem 0}.kind{display:inline-block;min-width:4.5rem;color:#666}.elapsed{display:inline-block;\
        min-width:4.5rem;color:#888}table#journeys{border-collapse:collapse;font-size:.85rem}table#journeys td,table#journeys th\
        {border-bottom:1px solid #ddd;padding:.2rem .4rem;text-align:left}pre{white-space:pre-wrap;font-size:.8rem}
        """

    static let journeyPages = [
        "journeys": """
        {{<page}}{{$title}}Journeys{{/title}}{{$body}}<style>\(style)</style><h1>Journeys</h1>
        <p class="tenant">{{tenant}} · b2c emulator · newest first, the last 200</p>
        {{^journeys}}<p id="none">No journeys yet: sign in through the tenant, then reload.</p>{{/journeys}}\
        {{#any}}<table id="journeys"><thead><tr><th>Started</th><th>Channel</th><th>Policy</th><th>User</th><th>Steps</th>\
        <th>Outcome</th><th>Open</th></tr></thead><tbody>
        {{#journeys}}<tr><td>{{started}}</td><td>{{channel}}</td><td>{{policy}}</td><td>{{user}}</td><td>{{steps}}</td>\
        <td class="outcome">{{outcome}}</td><td><code>/_admin/journeys/{{id}}</code></td></tr>
        {{/journeys}}</tbody></table>{{/any}}{{/body}}{{/page}}
        """,
        "journey": """
        {{<page}}{{$title}}Journey {{id}}{{/title}}{{$body}}<style>\(style)</style><h1>Journey</h1>
        <p class="tenant">{{tenant}} · b2c emulator</p>
        <dl id="summary"><dt>Id</dt><dd><code>{{id}}</code></dd><dt>Channel</dt><dd>{{channel}}</dd><dt>Policy</dt><dd>{{policy}}</dd>\
        <dt>Client</dt><dd>{{clientId}}</dd><dt>User</dt><dd>{{user}}</dd><dt>Started</dt><dd>{{started}}</dd>\
        <dt>Outcome</dt><dd class="outcome">{{outcome}}</dd></dl>
        <h2>Steps</h2>
        <ol id="events">{{#events}}<li id="event-{{n}}" class="event {{kind}}"><p><span class="elapsed">+{{elapsedMs}} ms</span> \
        <span class="kind">{{kind}}</span> <strong>{{name}}</strong>\
        {{#anchor}} · <a href="#{{anchor}}">{{anchorText}}</a>{{/anchor}}</p>\
        {{#hasDetail}}<dl class="claims">{{#detail}}<dt>{{key}}</dt><dd>{{value}}</dd>{{/detail}}</dl>{{/hasDetail}}</li>
        {{/events}}</ol>
        <h2>Codes sent</h2>
        {{^messages}}<p>None.</p>{{/messages}}<ol id="messages">{{#messages}}<li id="message-{{n}}">{{purpose}} to {{to}} \
        ({{channel}}): <code>{{code}}</code></li>{{/messages}}</ol>
        <h2>Callouts</h2>
        {{^callouts}}<p>None.</p>{{/callouts}}<ol id="callouts">{{#callouts}}<li id="callout-{{n}}"><p><strong>{{step}}</strong> \
        {{url}} → {{status}} {{outcome}} ({{attempts}} attempts, {{durationMs}} ms)</p><pre>{{request}}</pre><pre>{{response}}</pre>\
        </li>{{/callouts}}</ol>{{/body}}{{/page}}
        """,
    ]
}

extension AdminEndpoint {
    /// Whether the request asked for a page (a browser's navigation) rather than JSON.
    static func wantsHTML(_ request: Request) -> Bool {
        let accept = request.headers[.accept] ?? ""
        return accept.contains("text/html") && !accept.hasPrefix("application/json")
    }

    func journeysPage(_ journeys: [JourneyRecord]) -> Response {
        let rows: [[String: Any]] = journeys.map { j in
            [
                "id": j.id, "started": Self.time(j.startedAt), "channel": j.channel, "policy": j.policy, "user": j.user ?? "-",
                "steps": String(j.events.filter { $0.kind == .step }.count), "outcome": j.outcome ?? "running",
            ]
        }
        return .html(PageTemplates.render("journeys", ["lang": "en", "tenant": tenantName, "journeys": rows, "any": !rows.isEmpty]))
    }

    func journeyPage(_ j: JourneyRecord) throws -> Response {
        let messages = try store.outbox.messages(to: nil).filter { $0.journey == j.id }.reversed()
        let callouts = store.callouts.all.filter { $0.journey == j.id }
        var codesSeen = 0, calloutsSeen = 0
        let events: [[String: Any]] = j.events.enumerated().map { i, e in
            var row: [String: Any] = [
                "n": String(i + 1), "kind": e.kind.rawValue, "name": e.name, "elapsedMs": String(e.elapsedMs),
                "detail": e.detail.sorted { $0.key < $1.key }.map { ["key": $0.key, "value": Self.text($0.value)] as [String: Any] },
                "hasDetail": !e.detail.isEmpty, "anchor": "", "anchorText": "",
            ]
            if e.kind == .code, codesSeen < messages.count {
                codesSeen += 1
                row["anchor"] = "message-\(codesSeen)"
                row["anchorText"] = "the code"
            } else if e.kind == .callout, calloutsSeen < callouts.count {
                calloutsSeen += 1
                row["anchor"] = "callout-\(calloutsSeen)"
                row["anchorText"] = "the callout"
            }
            if (row["anchor"] as? String)?.isEmpty == true { row["anchor"] = false }
            return row
        }
        let values: [String: Any] = [
            "lang": "en", "tenant": tenantName, "id": j.id, "channel": j.channel, "policy": j.policy, "clientId": j.clientId,
            "user": j.user ?? "-", "started": Self.time(j.startedAt), "outcome": j.outcome ?? "running", "events": events,
            "messages": messages.enumerated().map { i, m in
                [
                    "n": String(i + 1), "purpose": m.purpose, "to": m.recipient, "channel": m.channel.rawValue, "code": m.code,
                ] as [String: Any]
            },
            "callouts": callouts.enumerated().map { i, c in
                [
                    "n": String(i + 1), "step": c.step, "url": c.url, "status": c.status.map(String.init) ?? "no answer",
                    "outcome": c.outcome, "attempts": String(c.attempts), "durationMs": String(c.durationMs),
                    "request": c.request.serialized(), "response": c.response ?? "",
                ] as [String: Any]
            },
        ]
        return .html(PageTemplates.render("journey", values))
    }

    static func text(_ v: JSONValue) -> String {
        switch v {
        case .string(let s): s
        case .object(let o): o.sorted { $0.key < $1.key }.map { "\($0.key)=\(text($0.value))" }.joined(separator: ", ")
        default: v.serialized()
        }
    }

    static func time(_ epoch: Int) -> String {
        ISO8601.string(epoch: epoch)
    }
}
