import LCTraceStore

extension SQLiteStatement: SQLQuery {}

extension SQLiteDatabase: SQLReadConnection {
    package func query(_ sql: String) throws -> any SQLQuery { try prepare(sql) }
    package func jsonText(_ column: String, key: String) -> String { "json_extract(\(column), '$.\(key)')" }
    /// Schema 3 packs these tables; its `*_rows` views unpack them.
    package func relation(_ table: SharedTable) -> String { table.rowsView }

    /// The packed columns themselves (the view's texts and sums cost two thirds of the time):
    /// did_dt is the gap where is_dt is known; codes bits 3-4 (outcome), 7 (interactive) and
    /// 8 (backgrounded) all zero is 408 masked to 0; bits 5-6 are 2 (not animated) or 3.
    package func countedGapsSQL(sessions: String) -> String {
        """
        SELECT session, vc, will_seq - since_dseq, CASE (codes >> 5) & 3 WHEN 2 THEN 0 WHEN 3 THEN 1 END, did_dt
        FROM appearances
        WHERE session IN (\(sessions)) AND codes & 408 = 0 AND is_dt IS NOT NULL AND did_dt IS NOT NULL
        ORDER BY session
        """
    }
}
