import B2CFastPath
import Foundation
import GRDB

/// The answers `b2c token`'s fast path serves: what the full client answered a question, by the question's hash.
extension TokenStore {
    /// How many answers are kept (the newest): questions differ by working directory, so scripts run in many places.
    static let keptAnswers = 256

    /// The store's generation: every change to an account or a current account moves it on.
    public func generation() throws -> Int { try read { try Int.fetchOne($0, sql: "SELECT n FROM store_generation") ?? 0 } }

    /// Files `answer` under `question`; an identical answer already filed is left as it is (no write).
    func fileAnswer(_ answer: TokenAnswer, for question: String) throws {
        guard let text = answer.encoded else { return }
        let filed = try read { try String.fetchOne($0, sql: "SELECT answer FROM fast_answers WHERE question = ?", arguments: [question]) }
        guard filed != text else { return }
        try write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO fast_answers(question, answer) VALUES (?, ?)", arguments: [question, text])
            try db.execute(
                sql: "DELETE FROM fast_answers WHERE rowid NOT IN (SELECT rowid FROM fast_answers ORDER BY rowid DESC LIMIT ?)",
                arguments: [Self.keptAnswers])
        }
    }
}

extension B2CClient {
    /// Files what a silent token answered `question` (a `TokenQuestion`'s key) for the fast path of `b2c token`: only a
    /// token served from the cache with nothing to tell, under a configuration read from a file.
    public func fileFastAnswer(question: String, result: SilentResult) {
        guard result.fromCache, result.notice == nil, let digest = config.sourceDigest, let generation = try? store.generation()
        else { return }
        let answer = TokenAnswer(
            configPath: URL(fileURLWithPath: config.source).standardizedFileURL.path, configHash: digest, caFile: config.caFile ?? "",
            generation: generation, environment: result.account.environment, clientID: result.account.clientID,
            accountID: result.account.id, target: result.accessToken.target, policy: result.account.policy,
            secretHash: TokenAnswer.digest(Array(result.accessToken.secret.utf8)))
        try? store.fileAnswer(answer, for: question)
    }
}
