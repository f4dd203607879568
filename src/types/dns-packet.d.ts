// Types for the parts of dns-packet 5 we use (the package ships none). Shapes follow its README;
// only what src/dns and the DNS tests touch is declared.
declare module 'dns-packet' {
  export interface Question {
    type: string;
    name: string;
    class?: string;
  }

  export interface SoaData {
    mname: string;
    rname: string;
    serial?: number;
    refresh?: number;
    retry?: number;
    expire?: number;
    minimum?: number;
  }

  export interface SrvData {
    priority?: number;
    weight?: number;
    port: number;
    target: string;
  }

  /** A resource record; `data` and the type-specific fields depend on `type`. */
  export interface Answer {
    type: string;
    name: string;
    class?: string;
    ttl?: number;
    flush?: boolean;
    data?: any;
    // OPT
    udpPayloadSize?: number;
    extendedRcode?: number;
    ednsVersion?: number;
    flags?: number;
    flag_do?: boolean;
    options?: Array<{ code: number | string; data?: Buffer; [k: string]: unknown }>;
  }

  export interface Packet {
    type?: 'query' | 'response';
    id?: number;
    flags?: number;
    questions?: Question[];
    answers?: Answer[];
    authorities?: Answer[];
    additionals?: Answer[];
  }

  export interface DecodedPacket extends Required<Packet> {
    flag_qr: boolean;
    opcode: string;
    flag_aa: boolean;
    flag_tc: boolean;
    flag_rd: boolean;
    flag_ra: boolean;
    flag_z: boolean;
    flag_ad: boolean;
    flag_cd: boolean;
    rcode: string;
  }

  export function encode(packet: Packet, buf?: Buffer, offset?: number): Buffer;
  export function decode(buf: Buffer, offset?: number): DecodedPacket;
  export function streamEncode(packet: Packet): Buffer;
  export function streamDecode(buf: Buffer): DecodedPacket | null;
  export function encodingLength(packet: Packet): number;

  export const answer: {
    encode(a: Answer, buf?: Buffer, offset?: number): Buffer;
    decode(buf: Buffer, offset?: number): Answer;
    encodingLength(a: Answer): number;
  };

  /** Names in wire form, uncompressed (`name.encode('a.example')`). */
  export const name: {
    encode(n: string, buf?: Buffer, offset?: number): Buffer;
  };

  export const AUTHORITATIVE_ANSWER: number;
  export const TRUNCATED_RESPONSE: number;
  export const RECURSION_DESIRED: number;
  export const RECURSION_AVAILABLE: number;
  export const AUTHENTIC_DATA: number;
  export const CHECKING_DISABLED: number;
  export const DNSSEC_OK: number;

  const dnsPacket: {
    encode: typeof encode;
    decode: typeof decode;
    streamEncode: typeof streamEncode;
    streamDecode: typeof streamDecode;
    encodingLength: typeof encodingLength;
    answer: typeof answer;
    name: typeof name;
    AUTHORITATIVE_ANSWER: number;
    TRUNCATED_RESPONSE: number;
    RECURSION_DESIRED: number;
    RECURSION_AVAILABLE: number;
    AUTHENTIC_DATA: number;
    CHECKING_DISABLED: number;
    DNSSEC_OK: number;
  };
  export default dnsPacket;
}
