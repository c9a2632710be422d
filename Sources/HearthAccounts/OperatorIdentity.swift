/// The identity of an operator's token (`hearth token --admin`, minted only by the CLI):
/// its custom claim and its uid, which no account may take (an import refuses them too).
public enum OperatorIdentity {
    /// The custom claim that marks an operator's token.
    public static let claim = "hearth_admin"
    /// The uid of an operator's token.
    public static let uid = "hearth-admin"
}
