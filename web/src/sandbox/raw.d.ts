declare module '*?raw' {
  const text: string;
  export default text;
}
declare module '*?worker&url' {
  const url: string;
  export default url;
}
