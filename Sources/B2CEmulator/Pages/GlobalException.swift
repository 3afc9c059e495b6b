import B2CProtocol
import Foundation
import Hummingbird

/// B2C's error page (`globalexception`, `<div id="api" class="error-page-content" data-name="GlobalException">`): the
/// B2C error code and message in `#error`, a correlation id and the time, in English as B2C's own.
enum GlobalExceptionTemplates {
    static let globalException = [
        "error": """
        {{<page}}{{$title}}Error{{/title}}{{$body}}<div id="api" class="error-page-content" data-name="GlobalException">
        <h1>Sorry, but we're having trouble signing you in.</h1>
        <p class="tenant">{{tenant}} · b2c emulator</p>
        <div class="error" id="error" role="alert">{{message}}</div>
        <p class="note">Correlation ID: {{correlationId}}<br>Timestamp:
        {{timestamp}}</p>
        </div>{{/body}}{{/page}}
        """
    ]
}

protocol GlobalExceptionPages: PageMaking {}

extension GlobalExceptionPages {
    func errorPage(_ e: PageError, headers: [(String, String)] = []) -> Response {
        let values = [
            "lang": "en", "tenant": tenantName, "message": (e.code.map { "\($0): " } ?? "") + e.message,
            "correlationId": UUID().uuidString.lowercased(), "timestamp": B2CErrorDescription.timestampString(clock.date),
        ]
        return .html(PageTemplates.render("error", values), status: e.status, headers: headers)
    }
}
