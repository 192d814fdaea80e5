import { Breadcrumbs, SubjectTabs } from "../components/Bits";
import { CurvePage } from "./CurvePage";

export function ServerPage({ id }: { id: string }) {
  return (
    <div className="page">
      <Breadcrumbs items={[["Servers", "/servers"], ["Server", null]]} />
      <SubjectTabs kind="server" id={id} />
      <CurvePage kind="server" id={id} />
    </div>
  );
}
