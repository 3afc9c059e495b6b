"""The base of the test endpoints (the SAML IdP, the connector endpoint): an HTTP handler that logs nothing and answers
whole bodies."""
from http.server import BaseHTTPRequestHandler


class QuietHandler(BaseHTTPRequestHandler):
    default_type = "application/json"

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type=None, headers=()):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type or self.default_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
