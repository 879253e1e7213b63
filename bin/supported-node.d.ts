export declare const SUPPORTED: string;
export declare function isSupportedNode(version: string): boolean;
export declare function unsupportedNodeMessage(version: string): string;
